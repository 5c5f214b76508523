import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { createWorkflow, echoFlow, otherAccountKey, workflowPlatform } from './support.js';

type Tag = { id: string; name: string; createdAt: string; updatedAt: string };

describe.each(await testDialects())("n8n's tags API on %s", (dialect) => {
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

  it('creates, lists, gets, renames and deletes tags; a name is unique in the account', async () => {
    const created = await req('POST', '/api/v1/tags', { name: 'billing' });
    expect(created.statusCode).toBe(201);
    const tag = created.json() as Tag;
    expect(tag).toMatchObject({ name: 'billing', id: expect.stringMatching(/^tag_/) });
    expect((await req('POST', '/api/v1/tags', { name: 'billing' })).statusCode).toBe(409);
    expect((await req('GET', `/api/v1/tags/${tag.id}`)).json()).toEqual(tag);
    const names = ((await req('GET', '/api/v1/tags')).json() as { data: Tag[] }).data.map((t) => t.name);
    expect(names).toContain('billing');
    const renamed = (await req('PUT', `/api/v1/tags/${tag.id}`, { name: 'invoices' })).json() as Tag;
    expect(renamed.name).toBe('invoices');
    expect((await req('GET', `/api/v1/tags/${tag.id}`)).statusCode).toBe(404);
    expect((await req('DELETE', `/api/v1/tags/${renamed.id}`)).json()).toMatchObject({ name: 'invoices' });
    expect((await req('GET', `/api/v1/tags/${renamed.id}`)).statusCode).toBe(404);
  });

  it("a workflow's tags: saved with the workflow, read and set by id, renamed and deleted with the tag", async () => {
    const id = await createWorkflow(p, { ...echoFlow('tagged'), tags: [{ name: 'ops' }] });
    const own = (await req('GET', `/api/v1/workflows/${id}/tags`)).json() as Tag[];
    expect(own.map((t) => t.name)).toEqual(['ops']);
    // The tag a workflow brought is in the account's list with the same id.
    const all = ((await req('GET', '/api/v1/tags?limit=250')).json() as { data: Tag[] }).data;
    expect(all.find((t) => t.name === 'ops')?.id).toBe(own[0]?.id);

    const extra = (await req('POST', '/api/v1/tags', { name: 'nightly' })).json() as Tag;
    const set = await req('PUT', `/api/v1/workflows/${id}/tags`, [{ id: extra.id }, { id: own[0]?.id }]);
    expect(set.statusCode).toBe(200);
    expect((set.json() as Tag[]).map((t) => t.name)).toEqual(['nightly', 'ops']);
    const wf = (await req('GET', `/api/v1/workflows/${id}`)).json() as { tags: Array<{ name: string }> };
    expect(wf.tags.map((t) => t.name)).toEqual(['nightly', 'ops']);

    await req('PUT', `/api/v1/tags/${extra.id}`, { name: 'weekly' });
    await req('DELETE', `/api/v1/tags/${own[0]?.id}`);
    const after = (await req('GET', `/api/v1/workflows/${id}/tags`)).json() as Tag[];
    expect(after.map((t) => t.name)).toEqual(['weekly']);
  });

  it('refuses unknown tags, unknown workflows, bad names and unknown query parameters', async () => {
    const id = await createWorkflow(p, echoFlow('tag-refusals'));
    const unknown = await req('PUT', `/api/v1/workflows/${id}/tags`, [{ id: 'tag_nope' }]);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ details: { ids: ['tag_nope'] } });
    expect((await req('GET', '/api/v1/workflows/wf_nope/tags')).statusCode).toBe(404);
    expect((await req('POST', '/api/v1/tags', { name: '' })).statusCode).toBe(400);
    expect((await req('POST', '/api/v1/tags', { name: 'x'.repeat(25) })).statusCode).toBe(400);
    expect((await req('POST', '/api/v1/tags', { name: 'a', color: 'red' })).statusCode).toBe(400);
    expect((await req('GET', '/api/v1/tags?bogus=1')).statusCode).toBe(400);
  });

  it("another account neither sees nor changes this account's tags", async () => {
    const mine = (await req('POST', '/api/v1/tags', { name: 'private' })).json() as Tag;
    const wf = await createWorkflow(p, echoFlow('tag-private'));
    const other = await otherAccountKey(p);
    expect((await req('GET', `/api/v1/tags/${mine.id}`, undefined, other)).statusCode).toBe(404);
    expect((await req('PUT', `/api/v1/tags/${mine.id}`, { name: 'x' }, other)).statusCode).toBe(404);
    expect((await req('DELETE', `/api/v1/tags/${mine.id}`, undefined, other)).statusCode).toBe(404);
    expect(((await req('GET', '/api/v1/tags', undefined, other)).json() as { data: Tag[] }).data).toEqual([]);
    expect((await req('PUT', `/api/v1/workflows/${wf}/tags`, [], other)).statusCode).toBe(404);
    // The other account's tag of the same name is its own.
    expect((await req('POST', '/api/v1/tags', { name: 'private' }, other)).statusCode).toBe(201);
    expect((await req('GET', `/api/v1/tags/${mine.id}`)).json()).toMatchObject({ name: 'private' });
  });
});
