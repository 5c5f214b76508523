import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import {
  createCredential,
  createWorkflow,
  echoFlow,
  n8nNode,
  otherAccountKey,
  workflowPlatform,
} from './support.js';

type RunData = Record<
  string,
  Array<{ data?: { main: Array<Array<{ json: Record<string, unknown> }>> }; error?: { message: string } }>
>;
interface Execution {
  status: string;
  data: { resultData: { runData: RunData } };
}

/** Manual Trigger → the n8n node with `parameters`, its credential `credentialId`. */
function n8nFlow(parameters: Record<string, unknown>, credentialId: string) {
  return {
    name: 'n8n node',
    nodes: [
      n8nNode('Start', 'manualTrigger', 1, {}),
      n8nNode('n8n', 'n8n', 1, parameters, { credentials: { n8nApi: { id: credentialId, name: 'self' } } }),
    ],
    connections: { Start: { main: [[{ node: 'n8n', type: 'main', index: 0 }]] } },
  };
}

describe.each(await testDialects())('the n8n node (this platform’s public API) on %s', (dialect) => {
  let p: TestPlatform;
  let base = '';
  let own = '';
  let foreign = '';
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    await p.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(p.app.server.address() as AddressInfo).port}/api/v1`;
    own = await createCredential(p, 'self', 'n8nApi', { apiKey: p.adminKey, baseUrl: base });
    foreign = await createCredential(p, 'other', 'n8nApi', {
      apiKey: await otherAccountKey(p),
      baseUrl: base,
    });
  });
  afterAll(() => p.close());

  async function run(parameters: Record<string, unknown>, credentialId = own) {
    const id = await createWorkflow(p, n8nFlow(parameters, credentialId));
    const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/run`, payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    const runs = (res.json() as Execution).data.resultData.runData.n8n ?? [];
    return {
      items: (runs[0]?.data?.main[0] ?? []).map((i) => i.json),
      error: runs[0]?.error?.message,
    };
  }

  it('lists, reads, creates, updates, activates and deletes workflows through the API', async () => {
    const target = await createWorkflow(p, echoFlow(`n8n-node-${dialect}`));
    const all = await run({ resource: 'workflow', operation: 'getAll', returnAll: true });
    expect(all.error).toBeUndefined();
    expect(all.items.map((w) => w.id)).toContain(target);
    const one = await run({
      resource: 'workflow',
      operation: 'get',
      workflowId: { __rl: true, value: target, mode: 'id' },
    });
    expect(one.items).toEqual([expect.objectContaining({ id: target, name: `echo n8n-node-${dialect}` })]);

    const created = await run({
      resource: 'workflow',
      operation: 'create',
      workflowObject: JSON.stringify({
        ...echoFlow(`n8n-node-made-${dialect}`),
        active: true,
        id: 'ignored',
      }),
    });
    const madeId = created.items[0]?.id as string;
    expect(created.items[0]).toMatchObject({ active: false, name: `echo n8n-node-made-${dialect}` });
    const renamed = await run({
      resource: 'workflow',
      operation: 'update',
      workflowId: madeId,
      workflowObject: JSON.stringify({ ...echoFlow(`n8n-node-made-${dialect}`), name: 'renamed by node' }),
    });
    expect(renamed.error).toBeUndefined();
    expect(renamed.items[0]).toMatchObject({ id: madeId, name: 'renamed by node' });
    const activated = await run({ resource: 'workflow', operation: 'activate', workflowId: madeId });
    expect(activated.items[0]).toMatchObject({ active: true });
    await run({ resource: 'workflow', operation: 'deactivate', workflowId: madeId });
    await run({ resource: 'workflow', operation: 'delete', workflowId: madeId });
    expect((await p.request({ method: 'GET', url: `/api/v1/workflows/${madeId}` })).statusCode).toBe(404);
  });

  it('reads executions, a credential schema and an audit', async () => {
    const executions = await run({ resource: 'execution', operation: 'getAll', limit: 2 });
    expect(executions.error).toBeUndefined();
    expect(executions.items.length).toBeGreaterThan(0);
    expect(executions.items.length).toBeLessThanOrEqual(2);
    const first = executions.items[0]?.id as string;
    const got = await run({ resource: 'execution', operation: 'get', executionId: first });
    expect(got.items[0]).toMatchObject({ id: first });
    const schema = await run({
      resource: 'credential',
      operation: 'getSchema',
      credentialTypeName: 'httpHeaderAuth',
    });
    expect(schema.items[0]).toMatchObject({ type: 'object', required: ['name', 'value'] });
    const audit = await run({
      resource: 'audit',
      operation: 'generate',
      additionalOptions: { categories: ['instance'] },
    });
    expect(audit.error).toBeUndefined();
    expect(audit.items[0]).toHaveProperty(['Instance Risk Report', 'risk'], 'instance');
  });

  it('creates and deletes a credential', async () => {
    const made = await run({
      resource: 'credential',
      operation: 'create',
      name: `by node ${dialect}`,
      credentialTypeName: 'httpHeaderAuth',
      data: '{"name":"x-token","value":"s3cret"}',
    });
    const id = made.items[0]?.id as string;
    expect(made.items[0]).toMatchObject({ name: `by node ${dialect}`, type: 'httpHeaderAuth' });
    expect(JSON.stringify(made.items)).not.toContain('s3cret');
    await run({ resource: 'credential', operation: 'delete', credentialId: id });
    expect((await p.request({ method: 'GET', url: `/api/v1/credentials/${id}` })).statusCode).toBe(404);
  });

  it("another account's key reaches none of this account's workflows", async () => {
    const target = await createWorkflow(p, echoFlow(`n8n-node-private-${dialect}`));
    const got = await run({ resource: 'workflow', operation: 'get', workflowId: target }, foreign);
    expect(got.error).toMatch(/not found/i);
    const listed = await run({ resource: 'workflow', operation: 'getAll', returnAll: true }, foreign);
    expect(listed.items.map((w) => w.id)).not.toContain(target);
  });

  it('fails the node with a clear message on bad input; refuses an unknown operation at save', async () => {
    const bad = await run({ resource: 'workflow', operation: 'create', workflowObject: '{nope' });
    expect(bad.error).toMatch(/Workflow Object.*JSON object/);
    const missing = await run({ resource: 'execution', operation: 'get', executionId: '' });
    expect(missing.error).toMatch(/Execution ID/);
    const refused = await p.request({
      method: 'POST',
      url: '/api/v1/workflows',
      payload: n8nFlow({ resource: 'audit', operation: 'getAll' }, own),
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toMatch(/not an operation of audit/);
  });
});
