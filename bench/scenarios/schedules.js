/**
 * Issue 18: scheduler precision. Two platform processes (both with workers, so two schedulers) on one
 * SQLite file run a per-second Schedule Trigger for BENCH_SCHEDULE_SECONDS (60); each fire's lateness
 * is its execution's start minus its due time (the fire item's timestamp). The baseline is a Node timer
 * in this process aimed at the same whole seconds over the same window: the jitter any timer sees here.
 * Duplicates (a due time started twice) must be 0. Run alone: `BENCH_ONLY=schedules node bench/run.js`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKey } from '../../dist/modules/auth/key-format.js';
import { PLATFORM_NODE_FLAGS, start, stop, waitHealthy } from '../children.js';
import { client, fmt, percentile, sleep } from '../kit.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(process.env.BENCH_SCHEDULE_SECONDS ?? 60);

export default [];

const perSecond = {
  name: 'bench every second',
  nodes: [
    {
      id: 'tick',
      name: 'Schedule Trigger',
      type: 'n8n-nodes-base.scheduleTrigger',
      typeVersion: 1.2,
      position: [0, 0],
      parameters: { rule: { interval: [{ field: 'seconds', secondsInterval: 1 }] } },
    },
  ],
  connections: {},
};

/** A timer chain aimed at each whole second until `until`: how late Node's own timers are. */
async function timerLateness(until) {
  const late = [];
  while (Date.now() < until) {
    const due = Math.ceil((Date.now() + 1) / 1000) * 1000;
    await sleep(due - Date.now());
    late.push(Date.now() - due);
  }
  return late.sort((a, b) => a - b);
}

export async function report() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-bench-schedules-'));
  const key = generateKey('production');
  const env = {
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    REDIS_URL: '',
    LOG_LEVEL: 'warn',
    PORT: '0',
    PLATFORM_BOOTSTRAP_KEY: key,
    RATE_LIMIT_PER_IP: '0',
    RATE_LIMIT_PER_ENDPOINT: '0',
  };
  const server = path.join(here, '..', 'platform-server.js');
  const procs = [];
  try {
    // The first migrates the fresh file; the second starts on it.
    procs.push(await start(server, env, PLATFORM_NODE_FLAGS));
    procs.push(await start(server, env, PLATFORM_NODE_FLAGS));
    const url = `http://127.0.0.1:${procs[0].port}`;
    await waitHealthy(url);
    await waitHealthy(`http://127.0.0.1:${procs[1].port}`);
    const call = client(url, key);
    const { id } = await call('POST', '/api/v1/workflows', perSecond, [201]);
    await call('POST', `/api/v1/workflows/${id}/activate`, undefined, [200]);
    const baseline = await timerLateness(Date.now() + SECONDS * 1000);
    await call('POST', `/api/v1/workflows/${id}/deactivate`, undefined, [200]);
    await sleep(1500);

    const runs = [];
    let cursor = '';
    do {
      const page = await call(
        'GET',
        `/api/v1/executions?workflowId=${id}&limit=250${cursor}`,
        undefined,
        [200],
      );
      runs.push(...page.data);
      cursor = page.nextCursor ? `&cursor=${page.nextCursor}` : '';
    } while (cursor);
    const due = [];
    const lateness = [];
    for (const run of runs) {
      const detail = await call('GET', `/api/v1/executions/${run.id}?includeData=true`, undefined, [200]);
      const at = Date.parse(
        detail.data.resultData.runData['Schedule Trigger'][0].data.main[0][0].json.timestamp,
      );
      due.push(at);
      lateness.push(Date.parse(run.startedAt) - at);
    }
    lateness.sort((a, b) => a - b);
    const duplicates = due.length - new Set(due).size;
    return [
      '',
      `schedules: a per-second Schedule Trigger for ${SECONDS} s, two processes on one SQLite file`,
      `  fires ${runs.length} (of ~${SECONDS}), duplicates ${duplicates}`,
      `  lateness ms: p50 ${fmt(percentile(lateness, 0.5))}, p99 ${fmt(percentile(lateness, 0.99))}, max ${fmt(lateness.at(-1) ?? 0)}`,
      `  baseline (a Node timer in the bench process): p50 ${fmt(percentile(baseline, 0.5))}, p99 ${fmt(percentile(baseline, 0.99))}`,
    ];
  } finally {
    for (const p of procs) await stop(p.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
