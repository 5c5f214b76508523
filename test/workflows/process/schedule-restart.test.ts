import { afterAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../../src/modules/auth/key-format.js';
import {
  apiClient,
  baseEnv,
  cleanup,
  createAndActivate,
  eventually,
  everySeconds,
  type PlatformProcess,
  sleep,
  startServer,
  tempDir,
} from './processes.js';

type Entry = { id: string; mode: string; startedAt: string };

/** Every 3 seconds, as n8n exports it. */
const everyThreeSeconds = everySeconds('every 3 s', 3);

describe('a schedule across a SIGKILL (embedded default: SQLite file, in-process queue)', () => {
  afterAll(() => cleanup());

  it('keeps firing after a restart, with one catch-up run for the times missed while down', async () => {
    const key = generateKey('production');
    const env = { ...baseEnv(tempDir()), PLATFORM_BOOTSTRAP_KEY: key };
    let server: PlatformProcess & { url: string } = await startServer(['serve'], env);
    let api = apiClient(server.url, key);
    const workflowId = await createAndActivate(api, everyThreeSeconds);
    const runs = async () =>
      (
        (await api('GET', `/api/v1/executions?workflowId=${workflowId}&limit=250`)).json.data as Entry[]
      ).filter((e) => e.mode === 'trigger');
    await eventually(async () => ((await runs()).length >= 1 ? true : undefined), 30_000, 'a first fire');

    await server.kill('SIGKILL');
    const killedAt = Date.now();
    // Two or three due times pass with no process running: a stretch of downtime the scenario needs,
    // not a wait for something to happen.
    await sleep(7_000);

    // Due times from here on are the new process's own (it may fire some while it starts up).
    const restartedAt = Date.now();
    server = await startServer(['serve'], env);
    api = apiClient(server.url, key);
    await eventually(
      async () =>
        (await runs()).filter((e) => Date.parse(e.startedAt) >= restartedAt).length >= 2 ? true : undefined,
      15_000,
      'the catch-up and a regular fire',
    );
    // Each run's due time is its fire item's timestamp.
    const dueTimes: number[] = [];
    for (const run of await runs()) {
      const detail = (await api('GET', `/api/v1/executions/${run.id}?includeData=true`)).json;
      dueTimes.push(
        Date.parse(detail.data.resultData.runData['Schedule Trigger'][0].data.main[0][0].json.timestamp),
      );
    }
    expect(new Set(dueTimes).size, 'no due time ran twice').toBe(dueTimes.length);
    // Of the two or three times missed while down, one ran (after the restart), not all of them.
    const missed = dueTimes.filter((t) => t > killedAt && t < restartedAt);
    expect(missed).toHaveLength(1);
  }, 60_000);
});
