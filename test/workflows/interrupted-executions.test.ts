import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../../src/core/db/faults.js';
import { newId } from '../../src/core/ids.js';
import type { Maintenance } from '../../src/modules/workflows/executions/maintenance.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { createWorkflow, flow, workflowPlatform } from './support.js';

/** What a queue job's failure looks like when the database went away under it. */
const lost = () =>
  new DatabaseUnavailableError('The database is unavailable (restarting)', 'restarting', false);

describe.each(await testDialects())('executions interrupted by a database fault on %s', (dialect) => {
  let p: TestPlatform;
  let maintenance: Maintenance;
  let workflowId = '';

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    const api = p.ctx.apis.workflows;
    if (!api) throw new Error('workflows module missing');
    maintenance = api.maintenance;
    workflowId = await createWorkflow(
      p,
      flow('interrupted', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'interrupted' } },
        { name: 'Set', type: 'set', parameters: { values: { ok: true } } },
      ]),
    );
  });
  afterAll(async () => {
    await p.close();
  });

  /** An execution row as a job left it when the fault came: `new` (claim failed) or `running`. */
  async function leftAs(status: 'new' | 'running'): Promise<string> {
    const id = newId('exe');
    await p.ctx.db
      .insertInto('executions')
      .values({
        id,
        account_id: p.accountId,
        workflow_id: workflowId,
        workflow_version: 1,
        mode: 'webhook',
        status,
        finished: 0,
        retry_of: null,
        trigger_data: JSON.stringify({ nodeName: 'Webhook', items: [{ json: { body: {} } }] }),
        run_data: null,
        error_message: null,
        response: null,
        wait_till: null,
        started_at: new Date().toISOString(),
        stopped_at: null,
      })
      .execute();
    return id;
  }

  const rowOf = (id: string) =>
    p.ctx.db
      .selectFrom('executions')
      .select(['status', 'error_message'])
      .where('id', '=', id)
      .executeTakeFirst();
  const statusOf = async (id: string) => (await rowOf(id))?.status;

  it('a job failed on a fault is remembered and taken up: `new` runs, a `running` nobody runs is recorded crashed', async () => {
    const fresh = await leftAs('new');
    const orphan = await leftAs('running');
    expect(maintenance.noteFailure(lost(), fresh)).toBe(true);
    expect(maintenance.noteFailure(lost(), orphan)).toBe(true);
    // Another failure (a bug) is not a fault: it is logged, never run again.
    expect(maintenance.noteFailure(new Error('boom'), await leftAs('new'))).toBe(false);
    expect(maintenance.interruptedCount).toBe(2);

    expect(await maintenance.retryInterrupted()).toBe(2);
    expect(maintenance.interruptedCount).toBe(0);
    expect(await statusOf(fresh)).toBe('success');
    // Recorded as crashed: a failed run saying why.
    expect(await rowOf(orphan)).toMatchObject({
      status: 'error',
      error_message: expect.stringContaining('crashed'),
    });
  });

  it('after a reconnect, executions stored but never queued run', async () => {
    const stranded = await leftAs('new');
    await maintenance.afterReconnect();
    const end = Date.now() + 10_000;
    while ((await statusOf(stranded)) !== 'success') {
      if (Date.now() > end) throw new Error(`still ${await statusOf(stranded)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  });
});
