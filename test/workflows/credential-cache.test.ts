import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { CredentialService } from '../../src/modules/workflows/credentials/service.js';
import { CredentialStore } from '../../src/modules/workflows/credentials/store.js';
import type { TestPlatform } from '../helpers/platform.js';
import { PG_URL, testDialects } from '../helpers/services.js';
import { createCredential, createWorkflow, n8nNode, workflowPlatform } from './support.js';

/** Waits for `check` to hold (polling), failing after `timeoutMs`; answers the time it took. */
async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.each(await testDialects())('credentials kept in memory for running workflows, on %s', (dialect) => {
  let p: TestPlatform;
  const pgUrl = new URL(PG_URL);
  const pgData = (database: string) => ({
    host: '127.0.0.1',
    port: pgUrl.port || '5432',
    database,
    user: decodeURIComponent(pgUrl.username) || 'postgres',
    password: decodeURIComponent(pgUrl.password),
  });

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
  });
  afterAll(() => p.close());

  /** A workflow asking the Postgres node which database its credential leads to; runs it on demand. */
  async function databaseFlow(credentialId: string) {
    const id = await createWorkflow(p, {
      name: `which db ${credentialId}`,
      nodes: [
        n8nNode('Start', 'manualTrigger', 1, {}),
        n8nNode(
          'DB',
          'postgres',
          2.5,
          { operation: 'executeQuery', query: 'SELECT current_database() AS db', options: {} },
          { credentials: { postgres: { id: credentialId, name: 'pg' } } },
        ),
      ],
      connections: { Start: { main: [[{ node: 'DB', type: 'main', index: 0 }]] } },
    });
    return async (): Promise<{ db?: unknown; error?: string }> => {
      const res = await p.request({
        method: 'POST',
        url: `/api/v1/workflows/${id}/run`,
        payload: { startNode: 'DB', items: [{ json: {} }] },
      });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as {
        data: {
          resultData: {
            runData: Record<string, Array<{ data?: { main: Array<Array<{ json: { db?: unknown } }>> } }>>;
            error?: { message: string };
          };
        };
      };
      const error = body.data.resultData.error?.message;
      const db = body.data.resultData.runData.DB?.[0]?.data?.main[0]?.[0]?.json.db;
      return error ? { error } : { db };
    };
  }

  it('a credential changed through the API is used by the very next run', async () => {
    const cred = await createCredential(p, 'pg-cache-update', 'postgres', pgData('test'));
    const run = await databaseFlow(cred);
    expect(await run()).toEqual({ db: 'test' });
    expect(await run()).toEqual({ db: 'test' }); // from the cache
    const res = await p.request({
      method: 'PATCH',
      url: `/api/v1/credentials/${cred}`,
      payload: { data: pgData('postgres') },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(await run()).toEqual({ db: 'postgres' });
  });

  it('a credential deleted through the API fails the very next run', async () => {
    const cred = await createCredential(p, 'pg-cache-delete', 'postgres', pgData('test'));
    const run = await databaseFlow(cred);
    expect(await run()).toEqual({ db: 'test' });
    const res = await p.request({ method: 'DELETE', url: `/api/v1/credentials/${cred}` });
    expect(res.statusCode, res.body).toBe(200);
    const after = await run();
    expect(after.db).toBeUndefined();
    expect(after.error).toMatch(/not found/i);
  });

  /** Two services over one database: two platform processes, each with its own memory. */
  function twoProcesses(ttlMs: number) {
    const box = p.ctx.secrets.box('workflow-credentials');
    const store = new CredentialStore(p.ctx.db);
    const options = { ttlMs, max: 100 };
    return [
      new CredentialService(store, box, systemClock, undefined, undefined, options),
      new CredentialService(store, box, systemClock, undefined, undefined, options),
    ] as const;
  }

  it('a change made by another process takes effect within the cache time, not later', async () => {
    const ttlMs = 300;
    const [a, b] = twoProcesses(ttlMs);
    const account = p.accountId;
    const created = await a.create(account, {
      name: 'hmac-two-procs',
      type: 'hmacSecret',
      data: { secret: 'old-secret' },
    });
    const workflowId = 'wf_not_saved';
    expect((await b.revealForWorkflow(account, created.id, workflowId))?.data).toEqual({
      secret: 'old-secret',
    });
    const changedAt = Date.now();
    await a.update(account, created.id, { data: { secret: 'new-secret' } });
    // The process that changed it: at once.
    expect((await a.revealForWorkflow(account, created.id, workflowId))?.data).toEqual({
      secret: 'new-secret',
    });
    // The other: still the old secret now, the new one within the cache time.
    expect((await b.revealForWorkflow(account, created.id, workflowId))?.data.secret).toBe('old-secret');
    await until(
      async () => (await b.revealForWorkflow(account, created.id, workflowId))?.data.secret === 'new-secret',
      5_000,
    );
    expect(Date.now() - changedAt).toBeLessThan(ttlMs + 1_000);
    await a.delete(account, created.id);
    expect(await a.revealForWorkflow(account, created.id, workflowId)).toBeNull();
    await until(async () => (await b.revealForWorkflow(account, created.id, workflowId)) === null, 5_000);
  });

  it('a node changing the data it was given does not change the next run’s', async () => {
    const [a] = twoProcesses(60_000);
    const created = await a.create(p.accountId, {
      name: 'hmac-mutated',
      type: 'hmacSecret',
      data: { secret: 'kept' },
    });
    const first = await a.revealForWorkflow(p.accountId, created.id, 'wf_x');
    if (!first) throw new Error('not revealed');
    first.data.secret = 'changed by a node';
    expect((await a.revealForWorkflow(p.accountId, created.id, 'wf_x'))?.data.secret).toBe('kept');
  });

  it('a withdrawn share, a transfer and a re-saved workflow drop the cached credential at once', async () => {
    const [a] = twoProcesses(60_000);
    const account = p.accountId;
    const created = await a.create(account, {
      name: 'hmac-shared',
      type: 'hmacSecret',
      data: { secret: 's' },
    });
    const wf = await createWorkflow(p, {
      name: 'uses hmac-shared',
      nodes: [n8nNode('Start', 'manualTrigger', 1, {})],
      connections: {},
    });
    // Saved by a key the credential is shared with.
    await p.ctx.db.updateTable('workflows').set({ saved_by: 'key:k1' }).where('id', '=', wf).execute();
    const known = async () => true;
    await a.share(account, created.id, ['key:k1'], null, known);
    expect((await a.revealForWorkflow(account, created.id, wf))?.data.secret).toBe('s');
    await a.share(account, created.id, [], null, known);
    await expect(a.revealForWorkflow(account, created.id, wf)).rejects.toThrow();
    await a.transfer(account, created.id, 'key:k1', null, known);
    expect((await a.revealForWorkflow(account, created.id, wf))?.data.secret).toBe('s');
    await a.transfer(account, created.id, 'account', null, known);
    await expect(a.revealForWorkflow(account, created.id, wf)).rejects.toThrow();
    // Re-saved by the account: the service hears of it (the workflows module calls forgetRevealed).
    await p.ctx.db.updateTable('workflows').set({ saved_by: 'account' }).where('id', '=', wf).execute();
    a.forgetRevealed(account);
    expect((await a.revealForWorkflow(account, created.id, wf))?.data.secret).toBe('s');
  });

  it('another account never gets the cached credential', async () => {
    const [a] = twoProcesses(60_000);
    const created = await a.create(p.accountId, {
      name: 'hmac-mine',
      type: 'hmacSecret',
      data: { secret: 'm' },
    });
    expect((await a.revealForWorkflow(p.accountId, created.id, 'wf_y'))?.data.secret).toBe('m');
    expect(await a.revealForWorkflow('acct_someone_else', created.id, 'wf_y')).toBeNull();
  });

  it('with CREDENTIAL_CACHE_SECONDS 0 nothing is kept', async () => {
    const [a, b] = twoProcesses(0);
    const created = await a.create(p.accountId, {
      name: 'hmac-nocache',
      type: 'hmacSecret',
      data: { secret: '1' },
    });
    expect((await b.revealForWorkflow(p.accountId, created.id, 'wf_z'))?.data.secret).toBe('1');
    await a.update(p.accountId, created.id, { data: { secret: '2' } });
    expect((await b.revealForWorkflow(p.accountId, created.id, 'wf_z'))?.data.secret).toBe('2');
  });
});
