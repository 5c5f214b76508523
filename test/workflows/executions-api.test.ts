import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authSuite } from '../helpers/auth-suite.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import {
  activate,
  createWorkflow,
  echoFlow,
  flow,
  otherAccountKey,
  settled,
  workflowPlatform,
} from './support.js';

type Entry = { id: string; workflowId: string; status: string; mode: string; retryOf: string | null };

describe.each(await testDialects())('executions API on %s', (dialect) => {
  let p: TestPlatform;
  let okFlow = '';
  let failFlow = '';
  const ok: string[] = [];
  const failed: string[] = [];

  beforeAll(async () => {
    p = await workflowPlatform(dialect, { EXECUTIONS_MAX_COUNT: '1000' });
    okFlow = await createWorkflow(p, echoFlow('exec-ok'));
    await activate(p, okFlow);
    failFlow = await createWorkflow(
      p,
      flow('fails', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'exec-fail', responseMode: 'onReceived' } },
        { name: 'Boom', type: 'stopAndError', parameters: { errorMessage: '=boom {{ $json.body.n }}' } },
      ]),
    );
    await activate(p, failFlow);
    for (let i = 0; i < 3; i++) {
      await p.app.inject({ method: 'POST', url: '/webhook/exec-ok', payload: { message: `m${i}` } });
      const res = await p.app.inject({ method: 'POST', url: '/webhook/exec-fail', payload: { n: i } });
      const id = (res.json() as { executionId: string }).executionId;
      failed.push(id);
      await settled(p, id);
    }
    const list = (
      await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${okFlow}` })
    ).json() as {
      data: Entry[];
    };
    ok.push(...list.data.map((e) => e.id));
  });
  afterAll(() => p.close());

  it('lists newest first with the entry fields; filters by workflow and status', async () => {
    const res = await p.request({ method: 'GET', url: '/api/v1/executions' });
    expect(res.statusCode).toBe(200);
    const { data } = res.json() as { data: Entry[] };
    expect(data).toHaveLength(6);
    expect(data.map((e) => e.id)).toEqual([...data.map((e) => e.id)].sort().reverse());
    expect(Object.keys(data[0] as object).sort()).toEqual(
      [
        'finished',
        'id',
        'mode',
        'retryOf',
        'startedAt',
        'status',
        'stoppedAt',
        'waitTill',
        'workflowId',
      ].sort(),
    );
    const errors = (await p.request({ method: 'GET', url: '/api/v1/executions?status=error' })).json() as {
      data: Entry[];
    };
    expect(errors.data.map((e) => e.id).sort()).toEqual([...failed].sort());
    const mine = (
      await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${okFlow}&status=success` })
    ).json() as {
      data: Entry[];
    };
    expect(mine.data).toHaveLength(3);
    expect(mine.data.every((e) => e.workflowId === okFlow && e.status === 'success')).toBe(true);
  });

  it('pages with limit and cursor; default 20, max 250', async () => {
    const first = (await p.request({ method: 'GET', url: '/api/v1/executions?limit=4' })).json() as {
      data: Entry[];
      nextCursor: string;
    };
    expect(first.data).toHaveLength(4);
    const second = (
      await p.request({ method: 'GET', url: `/api/v1/executions?limit=4&cursor=${first.nextCursor}` })
    ).json() as { data: Entry[]; nextCursor: string | null };
    expect(second.data).toHaveLength(2);
    expect(second.nextCursor).toBeNull();
    expect(new Set([...first.data, ...second.data].map((e) => e.id)).size).toBe(6);
    expect((await p.request({ method: 'GET', url: '/api/v1/executions?limit=251' })).statusCode).toBe(400);
  });

  it('a bad status or unknown filter → 400 naming it', async () => {
    const res = await p.request({ method: 'GET', url: '/api/v1/executions?status=exploded' });
    expect(res.statusCode).toBe(400);
    expect(JSON.stringify(res.json())).toMatch(/status/);
    expect((await p.request({ method: 'GET', url: '/api/v1/executions?owner=x' })).statusCode).toBe(400);
    expect((await p.request({ method: 'GET', url: '/api/v1/executions?limit=abc' })).statusCode).toBe(400);
  });

  it('filters by mode and by a start-time range; a bad instant → 400 naming it', async () => {
    const list = async (q: string) => {
      const res = await p.request({ method: 'GET', url: `/api/v1/executions?${q}` });
      expect(res.statusCode).toBe(200);
      return (res.json() as { data: Entry[] }).data;
    };
    expect((await list('mode=webhook')).map((e) => e.mode)).toEqual(Array(6).fill('webhook'));
    expect(await list('mode=manual')).toEqual([]);
    const all = await list('limit=250');
    const starts = all.map((e) => (e as Entry & { startedAt: string }).startedAt).sort();
    const [first, last] = [starts[0] as string, starts[starts.length - 1] as string];
    // `startedAfter` is inclusive, `startedBefore` exclusive.
    expect((await list(`startedAfter=${encodeURIComponent(first)}`)).length).toBe(6);
    expect(
      await list(`startedAfter=${encodeURIComponent(new Date(Date.parse(last) + 1).toISOString())}`),
    ).toEqual([]);
    expect((await list(`startedBefore=${encodeURIComponent(first)}`)).length).toBe(0);
    const fails = await list(`status=error&mode=webhook&startedAfter=${first}&startedBefore=2999-01-01`);
    expect(fails.map((e) => e.id).sort()).toEqual([...failed].sort());
    const bad = await p.request({ method: 'GET', url: '/api/v1/executions?startedAfter=yesterday' });
    expect(bad.statusCode).toBe(400);
    expect(JSON.stringify(bad.json())).toMatch(/startedAfter/);
  });

  it('detail (includeData=true) has the workflow as it ran and per-node output, start time, duration, error', async () => {
    const res = await p.request({ method: 'GET', url: `/api/v1/executions/${failed[0]}?includeData=true` });
    expect(res.statusCode).toBe(200);
    const body = res.json() as {
      workflowData: { id: string; nodes: unknown[] };
      data: {
        resultData: {
          runData: Record<
            string,
            Array<{
              startTime: number;
              executionTime: number;
              data: { main: unknown[][] };
              error?: { message: string };
            }>
          >;
          lastNodeExecuted: string;
          error: { message: string; node: string };
        };
      };
    };
    expect(body.workflowData.id).toBe(failFlow);
    expect(body.workflowData.nodes).toHaveLength(2);
    const boom = body.data.resultData.runData.Boom?.[0];
    expect(boom?.error?.message).toBe('boom 0');
    expect(typeof boom?.startTime).toBe('number');
    expect(typeof boom?.executionTime).toBe('number');
    expect(body.data.resultData.runData.Webhook?.[0]?.data.main[0]).toHaveLength(1);
    expect(body.data.resultData.error).toMatchObject({ node: 'Boom', message: 'boom 0' });
    expect(body.data.resultData.lastNodeExecuted).toBe('Boom');
  });

  it('shows the workflow as it ran even after the workflow changed', async () => {
    await p.request({
      method: 'PUT',
      url: `/api/v1/workflows/${okFlow}`,
      payload: { ...echoFlow('exec-ok'), name: 'renamed later' },
    });
    const body = (
      await p.request({ method: 'GET', url: `/api/v1/executions/${ok[0]}?includeData=true` })
    ).json() as {
      workflowData: { name: string };
    };
    expect(body.workflowData.name).toBe('echo exec-ok');
  });

  it('unknown or another account’s execution → 404 EXECUTION_NOT_FOUND', async () => {
    const unknown = await p.request({ method: 'GET', url: '/api/v1/executions/exe_nope' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: true, code: 'EXECUTION_NOT_FOUND' });
    const other = await otherAccountKey(p);
    expect(
      (await p.request({ method: 'GET', url: `/api/v1/executions/${ok[0]}`, key: other })).statusCode,
    ).toBe(404);
    expect(
      (await p.request({ method: 'POST', url: `/api/v1/executions/${failed[0]}/retry`, key: other }))
        .statusCode,
    ).toBe(404);
    expect(
      (await p.request({ method: 'DELETE', url: `/api/v1/executions/${ok[0]}`, key: other })).statusCode,
    ).toBe(404);
  });

  it('retry of a failed execution makes a new one (mode retry, retryOf); a successful one cannot be retried', async () => {
    const res = await p.request({ method: 'POST', url: `/api/v1/executions/${failed[1]}/retry` });
    expect(res.statusCode).toBe(201);
    const retry = res.json() as Entry;
    expect(retry).toMatchObject({ mode: 'retry', retryOf: failed[1], workflowId: failFlow });
    expect(retry.id).not.toBe(failed[1]);
    const done = await settled(p, retry.id);
    expect(done.status).toBe('error');
    expect((done.data as { resultData: { error: { message: string } } }).resultData.error.message).toBe(
      'boom 1',
    );
    const again = await p.request({ method: 'POST', url: `/api/v1/executions/${ok[0]}/retry` });
    expect(again.statusCode).toBe(409);
  });

  it('DELETE removes an execution', async () => {
    const res = await p.request({ method: 'DELETE', url: `/api/v1/executions/${ok[2]}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: ok[2], deleted: true });
    expect((await p.request({ method: 'GET', url: `/api/v1/executions/${ok[2]}` })).statusCode).toBe(404);
  });

  it('pruning removes executions past the maximum age and beyond the maximum count', async () => {
    const q = await workflowPlatform(dialect, { EXECUTIONS_MAX_COUNT: '3', EXECUTIONS_MAX_AGE_DAYS: '1' });
    try {
      const id = await createWorkflow(q, echoFlow('prune'));
      await activate(q, id);
      for (let i = 0; i < 5; i++) await q.app.inject({ method: 'POST', url: '/webhook/prune', payload: {} });
      const maintenance = q.ctx.apis.workflows?.maintenance;
      expect(await maintenance?.prune()).toBe(2);
      const left = (await q.request({ method: 'GET', url: '/api/v1/executions' })).json() as {
        data: Entry[];
      };
      expect(left.data).toHaveLength(3);
      q.clock.advance(2 * 86_400);
      expect(await maintenance?.prune()).toBe(3);
      const count = await sql<{ n: number }>`select count(*) as n from executions`.execute(q.ctx.db);
      expect(Number(count.rows[0]?.n)).toBe(0);
    } finally {
      await q.close();
    }
  });

  describe('auth', () => {
    authSuite(() => p, { method: 'GET', url: '/api/v1/executions', service: 'workflow' });
  });
});
