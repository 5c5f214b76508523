import type { Dialect } from '../../src/core/db/types.js';
import { authModule } from '../../src/modules/auth/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { portalModule } from '../../src/modules/portal/index.js';
import { workflowsModule } from '../../src/modules/workflows/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { uniqueName } from '../helpers/services.js';

export function workflowPlatform(
  dialect: Dialect,
  env: Record<string, string> = {},
  options: { redis?: boolean; portal?: boolean } = {},
): Promise<TestPlatform> {
  return createTestPlatform({
    dialect,
    // The portal: members' sessions (their cookies authenticate as the API does).
    modules: options.portal
      ? [authModule, portalModule, healthModule, workflowsModule]
      : [authModule, healthModule, workflowsModule],
    // Each platform its own queue in a shared Redis.
    env: { QUEUE_PREFIX: uniqueName('q'), OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost', ...env },
    ...(options.redis ? { redis: true } : {}),
  });
}

type NodeSpec = {
  name: string;
  type: string;
  parameters?: Record<string, unknown>;
  credentials?: Record<string, string>;
  continueOnFail?: boolean;
};

/** A node in n8n's export shape (`n8n-nodes-base.{type}`, its id its name); `extra` adds settings or credentials. */
export function n8nNode(
  name: string,
  type: string,
  typeVersion: number,
  parameters: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return {
    id: name,
    name,
    type: `n8n-nodes-base.${type}`,
    typeVersion,
    position: [0, 0],
    parameters,
    ...extra,
  };
}

/** A workflow body from nodes chained in order (or explicit edges `[from, to, output?]`). */
export function flow(name: string, nodes: NodeSpec[], edges?: Array<[string, string, number?]>) {
  const pairs: Array<[string, string, number?]> =
    edges ?? nodes.slice(1).map((n, i) => [nodes[i]?.name as string, n.name]);
  const connections: Record<string, { main: Array<Array<{ node: string; type: 'main'; index: number }>> }> =
    {};
  for (const [from, to, out = 0] of pairs) {
    const entry = connections[from] ?? { main: [] };
    while (entry.main.length <= out) entry.main.push([]);
    entry.main[out]?.push({ node: to, type: 'main', index: 0 });
    connections[from] = entry;
  }
  return {
    name,
    nodes: nodes.map((n, i) => ({ position: [i * 200, 0], parameters: {}, ...n })),
    connections,
  };
}

/** webhook → set → (answer with the last node). */
export function echoFlow(path: string, webhook: Record<string, unknown> = {}) {
  return flow(`echo ${path}`, [
    { name: 'Webhook', type: 'webhook', parameters: { path, responseMode: 'lastNode', ...webhook } },
    { name: 'Set', type: 'set', parameters: { values: { echoed: '={{ $json.body.message }}', ok: true } } },
  ]);
}

export async function createWorkflow(p: TestPlatform, body: unknown, key?: string): Promise<string> {
  const res = await p.request({
    method: 'POST',
    url: '/api/v1/workflows',
    payload: body as object,
    ...(key ? { key } : {}),
  });
  if (res.statusCode !== 201) throw new Error(`create workflow: ${res.statusCode} ${res.body}`);
  return (res.json() as { id: string }).id;
}

export async function activate(p: TestPlatform, id: string): Promise<void> {
  const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate` });
  if (res.statusCode !== 200) throw new Error(`activate: ${res.statusCode} ${res.body}`);
}

export async function createCredential(
  p: TestPlatform,
  name: string,
  type: string,
  data: Record<string, string>,
) {
  const res = await p.request({ method: 'POST', url: '/api/v1/credentials', payload: { name, type, data } });
  if (res.statusCode !== 201) throw new Error(`credential: ${res.statusCode} ${res.body}`);
  return (res.json() as { id: string }).id;
}

/** Polls an execution until it stops (status other than new/running); with its run data (n8n's `includeData`). */
export async function settled(
  p: TestPlatform,
  id: string,
  timeoutMs = 20_000,
  /** Statuses to wait past besides new and running (e.g. `waiting` after a resume was queued). */
  also: string[] = [],
): Promise<Record<string, unknown>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const res = await p.request({ method: 'GET', url: `/api/v1/executions/${id}?includeData=true` });
    const body = res.json() as Record<string, unknown>;
    if (res.statusCode === 200 && !['new', 'running', ...also].includes(body.status as string)) return body;
    if (Date.now() > end) throw new Error(`execution ${id} did not settle: ${res.body}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export { otherAccountKey } from '../helpers/accounts.js';
