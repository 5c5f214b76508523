import type { TestPlatform } from './platform.js';

/**
 * The sum of the samples named `name` whose labels include `labels`, in a Prometheus text
 * exposition; 0 when there is none.
 */
export function sampleSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.slice(name.length).split(' ')[0] ?? '';
    if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`)))
      sum += Number(line.split(' ').at(-1));
  }
  return sum;
}

/**
 * How many jobs of `queue` this platform (started with METRICS_ENABLED=true) has run to the end,
 * completed or failed (`platform_jobs_total`). A positive signal for tests that assert something does
 * NOT happen: once an execution's job has ended, its run starts no further node, its error workflow
 * is queued or never will be, and its answer is out.
 */
export async function jobsEnded(p: TestPlatform, queue = 'workflow-executions'): Promise<number> {
  const res = await p.request({ method: 'GET', url: '/metrics' });
  if (res.statusCode !== 200) throw new Error(`/metrics answered ${res.statusCode}: is METRICS_ENABLED set?`);
  return sampleSum(res.body, 'platform_jobs_total', { queue });
}
