import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

type Version = {
  versionId: string;
  workflowId: string;
  authors: string;
  name: string | null;
  nodes?: Array<{ name: string; parameters: Record<string, unknown> }>;
  createdAt: string;
};

/** webhook → wait for a resume call: its executions stay `waiting` until stopped. */
const waitingFlow = (path: string) =>
  flow(`waiting ${path}`, [
    { name: 'Webhook', type: 'webhook', parameters: { path, responseMode: 'onReceived' } },
    { name: 'Wait', type: 'wait', parameters: { resume: 'webhook' } },
  ]);

describe.each(await testDialects())("n8n's workflow history and bulk stop on %s", (dialect) => {
  let p: TestPlatform;
  let other: string;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    other = await otherAccountKey(p);
  });
  afterAll(() => p.close());

  const req = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, key?: string) =>
    p.request({
      method,
      url,
      ...(payload !== undefined ? { payload: payload as object } : {}),
      ...(key ? { key } : {}),
    });

  it('keeps every saved version: history newest first, each readable by its versionId', async () => {
    const first = echoFlow('history-one');
    const id = await createWorkflow(p, first);
    const v1 = (await req('GET', `/api/v1/workflows/${id}`)).json() as { versionId: string };
    const second = { ...echoFlow('history-two'), name: 'renamed' };
    const saved = await req('PUT', `/api/v1/workflows/${id}`, second);
    expect(saved.statusCode, saved.body).toBe(200);
    const v2 = saved.json() as { versionId: string };
    expect(v2.versionId).not.toBe(v1.versionId);

    const history = await req('GET', `/api/v1/workflows/${id}/history`);
    expect(history.statusCode, history.body).toBe(200);
    const items = history.json() as Version[];
    expect(items.map((v) => v.versionId)).toEqual([v2.versionId, v1.versionId]);
    expect(items[0]).toMatchObject({ workflowId: id, name: 'renamed', authors: expect.any(String) });
    expect(items[0]).not.toHaveProperty('nodes');
    expect(
      ((await req('GET', `/api/v1/workflows/${id}/history?take=1&skip=1`)).json() as Version[]).map(
        (v) => v.versionId,
      ),
    ).toEqual([v1.versionId]);

    const old = await req('GET', `/api/v1/workflows/${id}/${v1.versionId}`);
    expect(old.statusCode, old.body).toBe(200);
    const oldVersion = old.json() as Version;
    expect(oldVersion).toMatchObject({ versionId: v1.versionId, workflowId: id, name: first.name });
    expect(oldVersion.nodes?.find((n) => n.name === 'Webhook')?.parameters.path).toBe('history-one');
    const current = (await req('GET', `/api/v1/workflows/${id}/${v2.versionId}`)).json() as Version;
    expect(current.nodes?.find((n) => n.name === 'Webhook')?.parameters.path).toBe('history-two');
  });

  it('refuses unknown versions, bad paging and other accounts', async () => {
    const id = await createWorkflow(p, echoFlow('history-refusals'));
    const { versionId } = (await req('GET', `/api/v1/workflows/${id}`)).json() as { versionId: string };
    const missing = await req('GET', `/api/v1/workflows/${id}/00000000-0000-0000-0000-000000000000`);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ message: expect.stringContaining('not found') });
    expect((await req('GET', `/api/v1/workflows/${id}/%25%22x`)).statusCode).toBe(404);
    expect((await req('GET', `/api/v1/workflows/wf_nope/history`)).statusCode).toBe(404);
    for (const q of ['take=0', 'take=251', 'take=x', 'skip=-1', 'bogus=1']) {
      const bad = await req('GET', `/api/v1/workflows/${id}/history?${q}`);
      expect(bad.statusCode, q).toBe(400);
      expect(bad.json(), q).toMatchObject({ message: expect.any(String) });
    }
    expect((await req('GET', `/api/v1/workflows/${id}/history`, undefined, other)).statusCode).toBe(404);
    expect((await req('GET', `/api/v1/workflows/${id}/${versionId}`, undefined, other)).statusCode).toBe(404);
  });

  it('archives: inactive, its webhook released, refused changes, activation and runs until unarchived', async () => {
    const path = `archived-${dialect}`;
    const id = await createWorkflow(p, echoFlow(path));
    await activate(p, id);
    const call = () =>
      p.request({ method: 'POST', url: `/webhook/${path}`, key: null, payload: { message: 'hi' } });
    expect((await call()).statusCode).toBe(200);

    const archived = await req('POST', `/api/v1/workflows/${id}/archive`);
    expect(archived.statusCode, archived.body).toBe(200);
    expect(archived.json()).toMatchObject({ id, active: false, isArchived: true });
    expect((await call()).statusCode).toBe(404);
    // Idempotent, as n8n.
    expect((await req('POST', `/api/v1/workflows/${id}/archive`)).json()).toMatchObject({ isArchived: true });
    for (const [method, url, body] of [
      ['POST', `/api/v1/workflows/${id}/activate`, {}],
      ['PUT', `/api/v1/workflows/${id}`, echoFlow(path)],
      ['POST', `/api/v1/workflows/${id}/run`, {}],
      ['POST', `/api/v1/workflows/${id}/listen`, {}],
    ] as const) {
      const refused = await req(method, url, body);
      expect(refused.statusCode, url).toBe(400);
      expect(refused.json(), url).toMatchObject({ message: expect.stringContaining('archived') });
    }
    expect((await req('GET', `/api/v1/workflows/${id}`)).json()).toMatchObject({ isArchived: true });

    expect((await req('POST', `/api/v1/workflows/${id}/archive`, undefined, other)).statusCode).toBe(404);
    expect((await req('POST', `/api/v1/workflows/${id}/unarchive`, undefined, other)).statusCode).toBe(404);
    const back = await req('POST', `/api/v1/workflows/${id}/unarchive`);
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json()).toMatchObject({ isArchived: false, active: false });
    await activate(p, id);
    expect((await call()).statusCode).toBe(200);
  });

  it('archiving needs workflow:delete', async () => {
    const id = await createWorkflow(p, echoFlow(`archive-scope-${dialect}`));
    const { key } = await p.createKey({
      name: 'writer',
      type: 'development',
      services: ['workflow'],
      role: 'Writer',
    });
    expect((await req('POST', `/api/v1/workflows/${id}/archive`, undefined, key)).statusCode).toBe(403);
    expect((await req('POST', `/api/v1/workflows/${id}/archive`, { force: true })).statusCode).toBe(400);
  });

  it("publishes and unpublishes (n8n 2's activate and deactivate), only the current version", async () => {
    const path = `publish-${dialect}`;
    const id = await createWorkflow(p, echoFlow(path));
    const { versionId } = (await req('GET', `/api/v1/workflows/${id}`)).json() as { versionId: string };
    const saved = (await req('PUT', `/api/v1/workflows/${id}`, echoFlow(path))).json() as {
      versionId: string;
    };
    const old = await req('POST', `/api/v1/workflows/${id}/publish`, { versionId });
    expect(old.statusCode).toBe(400);
    expect(old.json()).toMatchObject({ message: expect.stringContaining('current version') });
    expect((await req('POST', `/api/v1/workflows/${id}/publish`, { bogus: 1 })).statusCode).toBe(400);
    expect((await req('POST', `/api/v1/workflows/${id}/publish`, {}, other)).statusCode).toBe(404);
    const published = await req('POST', `/api/v1/workflows/${id}/publish`, { versionId: saved.versionId });
    expect(published.statusCode, published.body).toBe(200);
    expect(published.json()).toMatchObject({ active: true });
    const call = await p.request({
      method: 'POST',
      url: `/webhook/${path}`,
      key: null,
      payload: { message: 'x' },
    });
    expect(call.statusCode).toBe(200);
    expect((await req('POST', `/api/v1/workflows/${id}/unpublish`, {}, other)).statusCode).toBe(404);
    expect((await req('POST', `/api/v1/workflows/${id}/unpublish`, {})).json()).toMatchObject({
      active: false,
    });
  });

  it('stops every waiting execution that matches, only the account’s own', async () => {
    const a = await createWorkflow(p, waitingFlow(`stop-many-a-${dialect}`));
    const b = await createWorkflow(p, waitingFlow(`stop-many-b-${dialect}`));
    await activate(p, a);
    await activate(p, b);
    const start = async (path: string) => {
      const res = await p.request({ method: 'POST', url: `/webhook/${path}`, key: null, payload: {} });
      expect(res.statusCode, res.body).toBe(200);
      const { executionId } = res.json() as { executionId: string };
      expect((await settled(p, executionId)).status).toBe('waiting');
      return executionId;
    };
    const a1 = await start(`stop-many-a-${dialect}`);
    const a2 = await start(`stop-many-a-${dialect}`);
    const b1 = await start(`stop-many-b-${dialect}`);

    // Another account stops none of them.
    const foreign = await req('POST', '/api/v1/executions/stop', { status: ['waiting'] }, other);
    expect(foreign.statusCode, foreign.body).toBe(200);
    expect(foreign.json()).toEqual({ stopped: 0 });
    // A window that ended before they started stops none.
    const early = await req('POST', '/api/v1/executions/stop', {
      status: ['waiting'],
      startedBefore: '2000-01-01T00:00:00.000Z',
    });
    expect(early.json()).toEqual({ stopped: 0 });

    const some = await req('POST', '/api/v1/executions/stop', {
      status: ['queued', 'waiting'],
      workflowId: a,
    });
    expect(some.statusCode, some.body).toBe(200);
    expect(some.json()).toEqual({ stopped: 2 });
    for (const e of [a1, a2]) {
      expect(((await req('GET', `/api/v1/executions/${e}`)).json() as { status: string }).status).toBe(
        'canceled',
      );
    }
    expect(((await req('GET', `/api/v1/executions/${b1}`)).json() as { status: string }).status).toBe(
      'waiting',
    );
    const rest = await req('POST', '/api/v1/executions/stop', {
      status: ['running', 'waiting'],
      startedAfter: '2000-01-01T00:00:00Z',
    });
    expect(rest.json()).toEqual({ stopped: 1 });
    expect((await req('POST', '/api/v1/executions/stop', { status: ['waiting'] })).json()).toEqual({
      stopped: 0,
    });
  });

  it('refuses a bulk stop without statuses, with unknown ones or a bad date, in a body with a message', async () => {
    const cases: unknown[] = [
      {},
      { status: [] },
      { status: ['success'] },
      { status: ['waiting'], startedAfter: 'yesterday' },
      { status: ['waiting'], projectId: 'x' },
    ];
    for (const body of cases) {
      const res = await req('POST', '/api/v1/executions/stop', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ message: expect.any(String) });
    }
  });
});
