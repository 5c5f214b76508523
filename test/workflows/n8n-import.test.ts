import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/core/db/database.js';
import * as m301 from '../../src/modules/workflows/migrations/301-workflows.js';
import * as m303 from '../../src/modules/workflows/migrations/303-workflow-n8n-fields.js';
import type { TestPlatform } from '../helpers/platform.js';
import { PG_URL, testDialects, uniqueName } from '../helpers/services.js';
import { createCredential, workflowPlatform } from './support.js';

type Json = Record<string, unknown>;
type Problem = { field: string; message: string };

/** A workflow as n8n's editor downloads it, every n8n node and workflow field set. */
function n8nExport(name: string, credentials: Json = {}): Json & { nodes: Json[] } {
  return {
    id: 'K9Pq2ZxYvHn3LmT4',
    name,
    active: true,
    isArchived: false,
    createdAt: '2025-01-02T03:04:05.000Z',
    updatedAt: '2025-01-02T03:04:06.000Z',
    triggerCount: 1,
    shared: [{ role: 'workflow:owner', workflowId: 'K9Pq2ZxYvHn3LmT4', projectId: 'p1' }],
    nodes: [
      {
        parameters: {},
        id: '0f5532f9-36ba-4bef-86c7-30d607400b15',
        name: 'When clicking ‘Test workflow’',
        type: 'n8n-nodes-base.manualTrigger',
        typeVersion: 1,
        position: [-100, 80],
        notes: 'starts it',
        notesInFlow: true,
      },
      {
        parameters: {},
        id: '7c3b9d2e-1111-4bef-86c7-30d607400b16',
        name: 'Call API',
        type: 'n8n-nodes-base.noOp',
        typeVersion: 1,
        position: [120, 80],
        webhookId: 'a1b2c3d4-0000-4000-8000-000000000001',
        credentials,
        onError: 'continueErrorOutput',
        retryOnFail: true,
        maxTries: 5,
        waitBetweenTries: 5000,
        alwaysOutputData: true,
        executeOnce: true,
        disabled: false,
        color: '#ff6d5a',
      },
    ],
    connections: {
      'When clicking ‘Test workflow’': { main: [[{ node: 'Call API', type: 'main', index: 0 }]] },
    },
    settings: { executionOrder: 'v1', saveManualExecutions: true },
    staticData: { lastId: 7 },
    pinData: { 'Call API': [{ json: { pinned: true } }] },
    meta: { templateCredsSetupCompleted: true, instanceId: 'abc123' },
    versionId: 'a6249f48-d88f-4b80-9ed9-79555e522d48',
    tags: [
      { id: 'wZnf3JbYpwXjdFiN', name: 'billing', createdAt: '2025-01-01T00:00:00.000Z' },
      { id: 'x', name: 'nightly' },
    ],
  };
}

const NODE_FIELDS = [
  'webhookId',
  'credentials',
  'onError',
  'retryOnFail',
  'maxTries',
  'waitBetweenTries',
  'alwaysOutputData',
  'executeOnce',
  'disabled',
  'color',
] as const;

describe.each(await testDialects())('n8n workflow fields on %s', (dialect) => {
  let p: TestPlatform;
  let credId: string;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    credId = await createCredential(p, 'Billing API', 'httpHeaderAuth', { name: 'x-api-key', value: 'k' });
  });
  afterAll(() => p.close());

  const post = (payload: Json) => p.request({ method: 'POST', url: '/api/v1/workflows', payload });
  const fieldsOf = (body: string) => (JSON.parse(body) as { details: { fields: Problem[] } }).details.fields;

  it("imports a full n8n export; GET returns n8n's fields as given, read-only ones ignored", async () => {
    const given = n8nExport('full export', { httpHeaderAuth: { id: credId, name: 'Billing API' } });
    const res = await post(given);
    expect(res.statusCode, res.body).toBe(201);
    const wf = res.json() as Json & { nodes: Json[] };
    // Read-only fields of n8n's create: ignored as n8n ignores them.
    expect(wf.id).toMatch(/^wf_/);
    expect(wf.active).toBe(false);
    expect(wf.createdAt).not.toBe(given.createdAt);
    expect(wf).toMatchObject({ isArchived: false, triggerCount: 0 });
    expect(wf).toMatchObject({
      name: 'full export',
      settings: given.settings,
      staticData: given.staticData,
      pinData: given.pinData,
      meta: given.meta,
      versionId: given.versionId,
      connections: given.connections,
    });
    // Tags keep their names; the id is the platform's, the same for the same name.
    const tags = wf.tags as Array<{ id: string; name: string }>;
    expect(tags.map((t) => t.name)).toEqual(['billing', 'nightly']);
    for (const t of tags) expect(Object.keys(t).sort()).toEqual(['id', 'name']);
    expect(tags[0]?.id).toMatch(/^tag_/);
    expect(tags[0]?.id).not.toBe(tags[1]?.id);
    // Every node field as given.
    expect(wf.nodes).toEqual(given.nodes);
    const got = await p.request({ method: 'GET', url: `/api/v1/workflows/${wf.id}` });
    expect(got.json()).toEqual(wf);

    const again = (await post({ ...given, name: 'same tags' })).json() as Json;
    expect(again.tags).toEqual(wf.tags);

    const list = await p.request({ method: 'GET', url: '/api/v1/workflows?limit=250' });
    const entry = (list.json() as { data: Json[] }).data.find((w) => w.id === wf.id);
    expect(entry).toEqual(wf);
  });

  it('a save without versionId gets a new one each time; with one, keeps it', async () => {
    const { versionId: _, ...body } = n8nExport('versions');
    const first = (await post(body)).json() as Json;
    expect(first.versionId).toMatch(/^[0-9a-f-]{36}$/);
    const url = `/api/v1/workflows/${first.id}`;
    const second = (await p.request({ method: 'PUT', url, payload: body })).json() as Json;
    expect(second.versionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.versionId).not.toBe(first.versionId);
    const kept = (await p.request({ method: 'PUT', url, payload: { ...body, versionId: 'v-given' } })).json();
    expect((kept as Json).versionId).toBe('v-given');
  });

  it('a minimal body gets n8n defaults back: no tags, empty pinData, null staticData and meta', async () => {
    const res = await post({ name: 'minimal', nodes: [], connections: {} });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ tags: [], pinData: {}, staticData: null, meta: null, settings: {} });
  });

  it('PUT replaces the n8n fields too, and the node fields with them', async () => {
    const id = ((await post(n8nExport('to replace'))).json() as Json).id;
    const next = n8nExport('replaced');
    next.tags = [{ name: 'other' }];
    next.pinData = null;
    next.staticData = '{"lastId":8}';
    const node = next.nodes[1] as Json;
    for (const f of NODE_FIELDS) delete node[f];
    const res = await p.request({ method: 'PUT', url: `/api/v1/workflows/${id}`, payload: next });
    expect(res.statusCode, res.body).toBe(200);
    const wf = res.json() as Json & { nodes: Json[] };
    expect(wf).toMatchObject({ pinData: null, staticData: '{"lastId":8}' });
    expect((wf.tags as Json[]).map((t) => t.name)).toEqual(['other']);
    for (const f of NODE_FIELDS) expect(wf.nodes[1]).not.toHaveProperty(f);
  });

  it('a bad onError, maxTries or waitBetweenTries is a 400 naming the node and the field', async () => {
    const body = n8nExport('bad settings');
    Object.assign(body.nodes[1] as Json, { onError: 'continue', maxTries: 6, waitBetweenTries: 5001 });
    Object.assign(body.nodes[0] as Json, { maxTries: 0, retryOnFail: 'yes' });
    const res = await post(body);
    expect(res.statusCode).toBe(400);
    const fields = fieldsOf(res.body);
    expect(fields.map((f) => f.field).sort()).toEqual([
      'body.nodes.0.maxTries',
      'body.nodes.0.retryOnFail',
      'body.nodes.1.maxTries',
      'body.nodes.1.onError',
      'body.nodes.1.waitBetweenTries',
    ]);
    const onError = fields.find((f) => f.field === 'body.nodes.1.onError');
    expect(onError?.message).toBe('must be one of: stopWorkflow, continueRegularOutput, continueErrorOutput');
    expect(fields.find((f) => f.field === 'body.nodes.1.maxTries')?.message).toContain('<= 5');
  });

  it('a field n8n does not have, on the workflow or a node, is a 400 naming it', async () => {
    const body = n8nExport('unknown fields');
    Object.assign(body, { owner: 'me' });
    Object.assign(body.nodes[1] as Json, { retries: 3 });
    Object.assign(body.nodes[0] as Json, { forceCustomOperation: { resource: 'a', operation: 'b' } });
    const res = await post(body);
    expect(res.statusCode).toBe(400);
    expect(fieldsOf(res.body)).toEqual(
      expect.arrayContaining([
        { field: 'body.owner', message: 'is not an allowed field' },
        { field: 'body.nodes.1.retries', message: 'is not an allowed field' },
        { field: 'body.nodes.0.forceCustomOperation', message: 'is not an allowed field' },
      ]),
    );
    const tagged = await post({ ...n8nExport('bad tag'), tags: [{ name: 'a', colour: 'red' }] });
    expect(fieldsOf(tagged.body)).toEqual([
      { field: 'body.tags.0.colour', message: 'is not an allowed field' },
    ]);
  });

  it("credentials in n8n's {id, name} shape resolve by id and by name; a missing one is named", async () => {
    const cases: Array<[Json, number]> = [
      [{ httpHeaderAuth: { id: credId, name: 'an old name' } }, 200],
      [{ httpHeaderAuth: { id: null, name: 'Billing API' } }, 200],
      [{ httpHeaderAuth: { name: 'Billing API' } }, 200],
      [{ httpHeaderAuth: credId }, 200],
      [{ httpHeaderAuth: { id: null, name: 'Nowhere' } }, 400],
    ];
    for (const [credentials, status] of cases) {
      const id = ((await post(n8nExport('creds', credentials))).json() as Json).id as string;
      const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate` });
      expect(res.statusCode, JSON.stringify(credentials)).toBe(status);
      if (status === 400) expect(res.body).toContain('nodes[1].credentials.httpHeaderAuth');
      else {
        const wf = (await p.request({ method: 'GET', url: `/api/v1/workflows/${id}` })).json() as Json & {
          nodes: Json[];
        };
        expect(wf.nodes[1]?.credentials).toEqual(credentials);
        expect(wf.active).toBe(true);
      }
    }
    const bad = await post(n8nExport('bad cred', { httpHeaderAuth: { id: credId } }));
    expect(fieldsOf(bad.body).map((f) => f.field)).toContain('body.nodes.1.credentials.httpHeaderAuth');
  });

  it("activate and deactivate answer with the workflow in n8n's shape; the versionId stays", async () => {
    const created = (await post(n8nExport('activation'))).json() as Json;
    const url = `/api/v1/workflows/${created.id}`;
    const on = await p.request({ method: 'POST', url: `${url}/activate` });
    expect(on.statusCode, on.body).toBe(200);
    const { active: _a, updatedAt: _u, ...rest } = created;
    expect(on.json()).toMatchObject({ ...rest, active: true, triggerCount: 0 });
    expect(on.json()).toEqual((await p.request({ method: 'GET', url })).json());
    const off = (await p.request({ method: 'POST', url: `${url}/deactivate` })).json() as Json;
    expect(off).toMatchObject({ active: false, versionId: 'a6249f48-d88f-4b80-9ed9-79555e522d48' });
    expect(off.nodes).toEqual(created.nodes);
  });
});

describe.each(await testDialects())('migration 303 on %s', (dialect) => {
  it('adds the n8n columns to existing workflows: no tags, a version id each; down removes them', async () => {
    const schema = dialect === 'postgres' ? uniqueName('t') : undefined;
    const database = await openDatabase({
      databaseUrl: dialect === 'postgres' ? PG_URL : '',
      dataDir: ':memory:',
      pgSchema: schema,
      pgPoolSize: 2,
    });
    const db = database.db as unknown as Kysely<unknown>;
    try {
      await m301.up(db);
      const at = '2026-01-01T00:00:00.000Z';
      for (const id of ['wf_a', 'wf_b'])
        await sql`insert into workflows (id, account_id, name, active, version, nodes, connections, settings, created_at, updated_at)
          values (${id}, 'acc', 'old', 0, 1, '[]', '{}', '{}', ${at}, ${at})`.execute(db);
      await m303.up(db);
      const { rows } = await sql<{
        tags: string;
        pin_data: string | null;
        static_data: string | null;
        meta: string | null;
        version_id: string;
      }>`select tags, pin_data, static_data, meta, version_id from workflows order by id`.execute(db);
      expect(rows.map((r) => [r.tags, r.pin_data, r.static_data, r.meta])).toEqual([
        ['[]', null, null, null],
        ['[]', null, null, null],
      ]);
      for (const r of rows) expect(r.version_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(rows[0]?.version_id).not.toBe(rows[1]?.version_id);
      await m303.down(db);
      const after = await sql<Record<string, unknown>>`select * from workflows`.execute(db);
      expect(Object.keys(after.rows[0] ?? {})).not.toContain('version_id');
    } finally {
      if (schema) await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
      await database.close();
    }
  });
});
