import { describe, expect, it } from 'vitest';
import { until } from '../helpers/until.js';
import { activate, createWorkflow, echoFlow, workflowPlatform } from '../workflows/support.js';

/** The value of one sample of a Prometheus text exposition, selected by name and labels. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.slice(name.length).split(' ')[0] ?? '';
    if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`)))
      return Number(line.split(' ').at(-1));
  }
  return undefined;
}

describe('job metrics in the running platform', () => {
  it('a webhook execution on the in-process queue shows in the job series', async () => {
    const p = await workflowPlatform('sqlite', { METRICS_ENABLED: 'true' });
    try {
      await activate(p, await createWorkflow(p, echoFlow('m-echo')));
      const res = await p.request({
        method: 'POST',
        url: '/webhook/m-echo',
        payload: { message: 'hi' },
        key: null,
      });
      expect(res.statusCode).toBe(200);
      const labels = { queue: 'workflow-executions', outcome: 'completed' };
      const text = await until(
        async () => {
          const body = (await p.request({ method: 'GET', url: '/metrics' })).body;
          return sample(body, 'platform_jobs_total', labels) === undefined ? undefined : body;
        },
        'the job in the series',
        20_000,
      );
      expect(sample(text, 'platform_jobs_total', labels)).toBe(1);
      expect(sample(text, 'platform_job_run_seconds_count', labels)).toBe(1);
      expect(sample(text, 'platform_job_wait_seconds_count', labels)).toBe(1);
    } finally {
      await p.close();
    }
  });
});
