import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { createWorkflow, echoFlow, otherAccountKey, settled, workflowPlatform } from './support.js';

type Tag = { id: string; name: string };

describe.each(await testDialects())("n8n's execution annotation tags on %s", (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
  });
  afterAll(() => p.close());

  const req = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, key?: string) =>
    p.request({
      method,
      url,
      ...(payload !== undefined ? { payload: payload as object } : {}),
      ...(key ? { key } : {}),
    });
  const tag = async (name: string) => (await req('POST', '/api/v1/tags', { name })).json() as Tag;
  const execution = async (path: string) => {
    const wf = await createWorkflow(p, echoFlow(path));
    const res = await req('POST', `/api/v1/workflows/${wf}/run`, { items: [{ body: { message: 'hi' } }] });
    expect([200, 202], res.body).toContain(res.statusCode);
    const id = (res.json() as { id: string }).id;
    await settled(p, id);
    return id;
  };
  const names = (res: { json(): unknown }) => (res.json() as Tag[]).map((t) => t.name);
  const listed = async (query: string) =>
    ((await req('GET', `/api/v1/executions?${query}`)).json() as { data: Array<{ id: string }> }).data.map(
      (e) => e.id,
    );

  it('sets, reads, replaces and clears the tags of an execution; filters the list by them', async () => {
    const [a, b] = [await tag('reviewed'), await tag('flaky')];
    const run = await execution('exec-tags-1');
    const other = await execution('exec-tags-2');
    expect((await req('GET', `/api/v1/executions/${run}/tags`)).json()).toEqual([]);

    const set = await req('PUT', `/api/v1/executions/${run}/tags`, [
      { id: b.id },
      { id: a.id },
      { id: b.id },
    ]);
    expect(set.statusCode, set.body).toBe(200);
    expect(names(set)).toEqual(['flaky', 'reviewed']);
    expect(set.json()).toEqual([
      expect.objectContaining({ id: b.id, createdAt: expect.any(String), updatedAt: expect.any(String) }),
      expect.objectContaining({ id: a.id }),
    ]);
    expect(names(await req('GET', `/api/v1/executions/${run}/tags`))).toEqual(['flaky', 'reviewed']);
    await req('PUT', `/api/v1/executions/${other}/tags`, [{ id: a.id }]);

    expect(await listed(`annotationTags=${b.id}`)).toEqual([run]);
    expect((await listed(`annotationTags=${a.id}`)).sort()).toEqual([run, other].sort());
    expect((await listed(`annotationTags=${a.id},${b.id}&limit=1`)).length).toBe(1);
    expect(await listed('annotationTags=tag_none')).toEqual([]);

    expect(names(await req('PUT', `/api/v1/executions/${run}/tags`, [{ id: a.id }]))).toEqual(['reviewed']);
    expect((await req('PUT', `/api/v1/executions/${run}/tags`, [])).json()).toEqual([]);
    expect(await listed(`annotationTags=${b.id}`)).toEqual([]);
  });

  it('follows a renamed tag, drops a deleted one, and goes with a deleted execution', async () => {
    const t = await tag('before');
    const gone = await tag('gone');
    const run = await execution('exec-tags-3');
    await req('PUT', `/api/v1/executions/${run}/tags`, [{ id: t.id }, { id: gone.id }]);
    const renamed = (await req('PUT', `/api/v1/tags/${t.id}`, { name: 'after' })).json() as Tag;
    expect(renamed.id).not.toBe(t.id);
    await req('DELETE', `/api/v1/tags/${gone.id}`);
    expect((await req('GET', `/api/v1/executions/${run}/tags`)).json()).toEqual([
      expect.objectContaining({ id: renamed.id, name: 'after' }),
    ]);
    expect(await listed(`annotationTags=${renamed.id}`)).toEqual([run]);

    expect((await req('DELETE', `/api/v1/executions/${run}`)).statusCode).toBe(200);
    expect((await req('GET', `/api/v1/executions/${run}/tags`)).statusCode).toBe(404);
    expect(await listed(`annotationTags=${renamed.id}`)).toEqual([]);
  });

  it('refuses unknown tags and executions, bad bodies and query parameters', async () => {
    const run = await execution('exec-tags-4');
    const unknown = await req('PUT', `/api/v1/executions/${run}/tags`, [{ id: 'tag_nope' }]);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'NOT_FOUND', details: { ids: ['tag_nope'] } });
    const none = await req('GET', '/api/v1/executions/exe_nope/tags');
    expect(none.statusCode).toBe(404);
    expect(none.json()).toMatchObject({ code: 'EXECUTION_NOT_FOUND', message: expect.any(String) });
    expect((await req('PUT', '/api/v1/executions/exe_nope/tags', [])).statusCode).toBe(404);
    expect((await req('PUT', `/api/v1/executions/${run}/tags`, { id: 'x' })).statusCode).toBe(400);
    expect((await req('PUT', `/api/v1/executions/${run}/tags`, [{ name: 'x' }])).statusCode).toBe(400);
    expect((await req('GET', `/api/v1/executions/${run}/tags?x=1`)).statusCode).toBe(400);
    expect((await req('GET', '/api/v1/executions?annotationTags=,')).statusCode).toBe(400);
  });

  it("another account neither reads nor sets this account's execution tags, nor uses its tags", async () => {
    const mine = await tag('mine-only');
    const run = await execution('exec-tags-5');
    await req('PUT', `/api/v1/executions/${run}/tags`, [{ id: mine.id }]);
    const other = await otherAccountKey(p);
    expect((await req('GET', `/api/v1/executions/${run}/tags`, undefined, other)).statusCode).toBe(404);
    expect((await req('PUT', `/api/v1/executions/${run}/tags`, [], other)).statusCode).toBe(404);
    const list = await req('GET', `/api/v1/executions?annotationTags=${mine.id}`, undefined, other);
    expect(list.statusCode).toBe(200);
    expect((list.json() as { data: unknown[] }).data).toEqual([]);
    // Its own execution cannot carry this account's tag.
    const wf = await createWorkflow(p, echoFlow('exec-tags-other'), other);
    const res = await req('POST', `/api/v1/workflows/${wf}/run`, { items: [{ body: {} }] }, other);
    const theirs = (res.json() as { id: string }).id;
    const refused = await req('PUT', `/api/v1/executions/${theirs}/tags`, [{ id: mine.id }], other);
    expect(refused.statusCode).toBe(404);
    expect(names(await req('GET', `/api/v1/executions/${run}/tags`))).toEqual(['mine-only']);
  });

  it('needs workflow:write to set and workflow:read to read', async () => {
    const run = await execution('exec-tags-6');
    const reader = await p.createKey({
      name: 'reader',
      type: 'production',
      services: ['workflow'],
      role: 'Reader',
    });
    expect((await req('GET', `/api/v1/executions/${run}/tags`, undefined, reader.key)).statusCode).toBe(200);
    expect((await req('PUT', `/api/v1/executions/${run}/tags`, [], reader.key)).statusCode).toBe(403);
  });
});
