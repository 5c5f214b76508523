import { randomUUID } from 'node:crypto';
import {
  isExpression,
  webhookNodesOf as parseWebhookNodes,
  type WebhookNodeInfo,
  type WorkflowDefinition,
  type WorkflowNode,
} from './engine/index.js';
import type { WorkflowBodyT } from './schemas.js';
import type { WorkflowRow } from './workflow-store.js';

/** A stored row as the engine's definition. */
export function definitionOf(row: WorkflowRow): WorkflowDefinition {
  return {
    id: row.id,
    name: row.name,
    nodes: JSON.parse(row.nodes) as WorkflowNode[],
    connections: JSON.parse(row.connections) as WorkflowDefinition['connections'],
    settings: JSON.parse(row.settings) as Record<string, unknown>,
  };
}

/** A request body as a definition: node ids and positions filled in, empty outputs kept as []. */
export function definitionFromBody(id: string, body: WorkflowBodyT): WorkflowDefinition {
  const nodes: WorkflowNode[] = body.nodes.map((n) => ({
    id: n.id ?? randomUUID(),
    name: n.name,
    type: n.type,
    ...(n.typeVersion !== undefined ? { typeVersion: n.typeVersion } : {}),
    position: n.position ?? [0, 0],
    parameters: n.parameters ?? {},
    ...(n.credentials ? { credentials: n.credentials } : {}),
    ...(n.continueOnFail !== undefined ? { continueOnFail: n.continueOnFail } : {}),
    ...(n.disabled !== undefined ? { disabled: n.disabled } : {}),
  }));
  const connections: WorkflowDefinition['connections'] = {};
  for (const [from, value] of Object.entries(body.connections)) {
    connections[from] = { main: value.main.map((targets) => targets ?? []) };
  }
  return { id, name: body.name, nodes, connections, settings: body.settings ?? {} };
}

/** Credentials a workflow refers to (by id or name), with where. */
export function credentialRefs(def: WorkflowDefinition): Array<{ ref: string; path: string }> {
  const refs: Array<{ ref: string; path: string }> = [];
  def.nodes.forEach((node, i) => {
    if (node.disabled) return;
    for (const [slot, ref] of Object.entries(node.credentials ?? {})) {
      refs.push({ ref, path: `nodes[${i}].credentials.${slot}` });
    }
    const param = node.parameters.credential;
    if (typeof param === 'string' && param !== '' && !isExpression(param)) {
      refs.push({ ref: param, path: `nodes[${i}].parameters.credential` });
    }
  });
  return refs;
}

/** What each webhook authentication needs of its credential. */
export const WEBHOOK_CREDENTIAL_TYPE = {
  basicAuth: 'httpBasicAuth',
  headerAuth: 'httpHeaderAuth',
  queryAuth: 'httpQueryAuth',
  hmac: 'hmacSecret',
} as const;

export function webhookKey(method: string, path: string): string {
  return `${method} ${path}`;
}

const hooksByDefinition = new WeakMap<WorkflowDefinition, WebhookNodeInfo[]>();

/** A definition's webhook nodes, parsed once per (cached, immutable) definition object. */
export function webhookNodesOf(def: WorkflowDefinition): WebhookNodeInfo[] {
  let hooks = hooksByDefinition.get(def);
  if (!hooks) {
    hooks = parseWebhookNodes(def);
    hooksByDefinition.set(def, hooks);
  }
  return hooks;
}
