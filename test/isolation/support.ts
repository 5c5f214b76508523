import type { TestPlatform } from '../helpers/platform.js';
import { createWorkflow, n8nNode } from '../workflows/support.js';

/**
 * A Code node that runs the JavaScript a caller posts (`body.code`) as an async function of
 * `(body, items, DateTime)`: one workflow per account serves every channel an attacker or a victim tries.
 */
const RUNNER = [
  'const body = $input.first().json.body;',
  'const AsyncFunction = (async () => {}).constructor;',
  'const out = await new AsyncFunction("body", "items", "DateTime", body.code)(body, items, DateTime);',
  'return [{ json: { out: out === undefined ? null : out } }];',
].join('\n');

export function runnerFlow(path: string) {
  return {
    name: `runner ${path}`,
    nodes: [
      n8nNode('Webhook', 'webhook', 2, { httpMethod: 'POST', path, responseMode: 'lastNode', options: {} }),
      n8nNode('Code', 'code', 2, { jsCode: RUNNER }),
    ],
    connections: { Webhook: { main: [[{ node: 'Code', type: 'main', index: 0 }]] } },
  };
}

/** Webhook → Set whose one field is `expression` (an n8n JavaScript expression over `$json.body`). */
export function expressionFlow(path: string, expression: string) {
  return {
    name: `expression ${path}`,
    nodes: [
      n8nNode('Webhook', 'webhook', 2, { httpMethod: 'POST', path, responseMode: 'lastNode', options: {} }),
      n8nNode('Set', 'set', 3.4, {
        assignments: { assignments: [{ id: 'r', name: 'result', value: expression, type: 'string' }] },
        options: {},
      }),
    ],
    connections: { Webhook: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
  };
}

/** Creates and activates a workflow as the holder of `key`. */
export async function deploy(p: TestPlatform, body: unknown, key: string): Promise<string> {
  const id = await createWorkflow(p, body, key);
  const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate`, payload: {}, key });
  if (res.statusCode !== 200) throw new Error(`activate: ${res.statusCode} ${res.body}`);
  return id;
}

/** Posts `body` to a webhook and returns the answer's JSON (the last node's first item). */
export async function hook(
  p: TestPlatform,
  path: string,
  body: Record<string, unknown>,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await p.app.inject({ method: 'POST', url: `/webhook/${path}`, payload: body });
  let json: Record<string, unknown> = {};
  try {
    json = res.json() as Record<string, unknown>;
  } catch {
    json = { raw: res.body };
  }
  return { status: res.statusCode, json };
}
