import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/core/ids.js';
import {
  CRASH_MESSAGE,
  type ExecutionRow,
  ExecutionStore,
} from '../../src/modules/workflows/executions/store.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { createWorkflow, workflowPlatform } from './support.js';

/** The store's side of crash recovery: what a checkpoint keeps and what recovery makes of it. */
describe.each(await testDialects())('execution checkpoints on %s', (dialect) => {
  let p: TestPlatform;
  let store: ExecutionStore;
  let workflowId = '';
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    store = new ExecutionStore(p.ctx.db);
    workflowId = await createWorkflow(p, {
      name: 'checkpoints',
      nodes: [
        {
          name: 'Start',
          type: 'n8n-nodes-base.manualTrigger',
          typeVersion: 1,
          position: [0, 0],
          parameters: {},
        },
      ],
      connections: {},
    });
  });
  afterAll(() => p.close());

  async function running(): Promise<string> {
    const id = newId('exe');
    const row: ExecutionRow = {
      id,
      account_id: p.accountId,
      workflow_id: workflowId,
      workflow_version: 1,
      mode: 'manual',
      status: 'new',
      finished: 0,
      retry_of: null,
      trigger_data: JSON.stringify({ nodeName: 'Start', items: [] }),
      run_data: null,
      error_message: null,
      response: null,
      wait_till: null,
      started_at: new Date().toISOString(),
      stopped_at: null,
    };
    await store.insert(row);
    expect(await store.claim(id, 'new')).toBeDefined();
    return id;
  }

  it('recovers a checkpointed run as waiting from its checkpoint, the others as crashed', async () => {
    const [kept, cleared, plain] = [await running(), await running(), await running()];
    // In the future: the platform's own wait poller (real clock) must not find the resumed run due and
    // claim it before this test does (it did, on a loaded machine).
    const at = '2099-11-24T10:00:05.000Z';
    await store.checkpoint(kept, '{"pending":[{"node":"A","input":[],"attempt":1}]}', at);
    await store.checkpoint(cleared, '{"pending":[]}', at);
    await store.clearCheckpoint(cleared);

    expect(await store.markCrashed([kept, cleared, plain], at)).toEqual({ resumed: 1, crashed: 2 });
    const keptRow = await store.get(kept);
    expect(keptRow).toMatchObject({ status: 'waiting', wait_till: at, error_message: null });
    expect(JSON.parse(keptRow?.run_data ?? 'null')).toEqual({
      pending: [{ node: 'A', input: [], attempt: 1 }],
    });
    for (const id of [cleared, plain])
      expect(await store.get(id)).toMatchObject({ status: 'error', error_message: CRASH_MESSAGE });
    // Due now: the poll finds it, and its claim leaves no checkpoint behind on the running row.
    expect((await store.dueWaits('2099-11-24T10:00:06.000Z', 10)).map((w) => w.id)).toContain(kept);
    expect(await store.claim(kept, 'waiting')).toMatchObject({ status: 'running', wait_till: null });
  });

  it('checkpoints only a running execution (a stopped one stays as it was)', async () => {
    const id = await running();
    await store.markCrashed([id], '2026-11-24T10:00:00.000Z');
    await store.checkpoint(id, '{"pending":[]}', '2026-11-24T10:00:05.000Z');
    expect(await store.get(id)).toMatchObject({ status: 'error', wait_till: null, run_data: null });
  });
});
