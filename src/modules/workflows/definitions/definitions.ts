import { createHash, randomUUID } from 'node:crypto';
import { AppError } from '../../../core/errors.js';
import {
  credentialRefOf,
  isExpression,
  webhookNodesOf as parseWebhookNodes,
  type WebhookNodeInfo,
  type WorkflowDefinition,
  type WorkflowNode,
} from '../engine/index.js';
import { resolveAliases } from '../nodes/aliases.js';
import { defaultNodeRegistry } from '../nodes/index.js';
import type { WorkflowBodyT } from '../schemas.js';
import type { WorkflowRow } from './store.js';

/** A stored row as the engine's definition. */
export function definitionOf(row: WorkflowRow): WorkflowDefinition {
  return {
    id: row.id,
    name: row.name,
    // A row saved before the one dialect may hold short names: read as what they stand for.
    nodes: resolveAliases({ nodes: JSON.parse(row.nodes) as WorkflowNode[] }).nodes,
    connections: JSON.parse(row.connections) as WorkflowDefinition['connections'],
    settings: JSON.parse(row.settings) as Record<string, unknown>,
  };
}

/** A request body as a definition: node ids and positions filled in, empty outputs kept as []. */
export function definitionFromBody(id: string, body: WorkflowBodyT): WorkflowDefinition {
  // The body schema refuses fields n8n's nodes do not have, so the rest are kept as given.
  const nodes: WorkflowNode[] = body.nodes.map(({ id: nodeId, position, parameters, ...rest }) => ({
    id: nodeId ?? randomUUID(),
    ...rest,
    position: position ?? [0, 0],
    parameters: parameters ?? {},
  }));
  const connections: WorkflowDefinition['connections'] = {};
  for (const [from, value] of Object.entries(body.connections)) {
    // Sub-nodes (n8n's AI nodes) connect by their ai_* type, kept as given; empty outputs become [].
    const entry: WorkflowDefinition['connections'][string] = {};
    for (const [kind, outputs] of Object.entries(value) as Array<[string, unknown]>) {
      if (Array.isArray(outputs))
        (entry as Record<string, unknown>)[kind] = outputs.map((targets) => targets ?? []);
    }
    connections[from] = entry;
  }
  // The platform's short node names are import-time aliases: a saved workflow holds n8n's types.
  return resolveAliases({ id, name: body.name, nodes, connections, settings: body.settings ?? {} });
}

/** n8n's workflow-level fields of a body as stored columns; a save without a versionId gets a new one. */
export function n8nColumnsFromBody(
  body: WorkflowBodyT,
): Pick<WorkflowRow, 'tags' | 'pin_data' | 'static_data' | 'meta' | 'version_id'> {
  const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
  const names = [...new Set((body.tags ?? []).map((t) => t.name))];
  return {
    tags: JSON.stringify(names),
    pin_data: json(body.pinData),
    static_data: json(body.staticData),
    meta: json(body.meta),
    version_id: body.versionId ?? randomUUID(),
  };
}

/** A tag's id: derived from its name, so the same name is the same tag in every workflow. */
export function tagIdOf(name: string): string {
  return `tag_${createHash('sha256').update(name).digest('base64url').slice(0, 16)}`;
}

/** A workflow's tags in n8n's shape, `[{ id, name }]`. */
export function tagsOf(row: Pick<WorkflowRow, 'tags'>): Array<{ id: string; name: string }> {
  return (JSON.parse(row.tags) as string[]).map((name) => ({ id: tagIdOf(name), name }));
}

/** Credentials a workflow refers to (by id or name), with where. */
export function credentialRefs(def: WorkflowDefinition): Array<{ ref: string; path: string }> {
  const refs: Array<{ ref: string; path: string }> = [];
  def.nodes.forEach((node, i) => {
    if (node.disabled) return;
    for (const [slot, given] of Object.entries(node.credentials ?? {})) {
      const ref = credentialRefOf(given);
      if (ref) refs.push({ ref, path: `nodes[${i}].credentials.${slot}` });
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
  bearerAuth: 'httpBearerAuth',
  queryAuth: 'httpQueryAuth',
  hmac: 'hmacSecret',
  jwtAuth: 'jwtAuth',
} as const;

const hooksByDefinition = new WeakMap<WorkflowDefinition, WebhookNodeInfo[]>();

/** A definition's webhook nodes, parsed once per (cached, immutable) definition object. */
export function webhookNodesOf(def: WorkflowDefinition): WebhookNodeInfo[] {
  let hooks = hooksByDefinition.get(def);
  if (!hooks) {
    hooks = parseWebhookNodes(def, defaultNodeRegistry);
    hooksByDefinition.set(def, hooks);
  }
  return hooks;
}

/** n8n refuses to change, activate or run an archived workflow (400): unarchive it first. */
export function assertNotArchived(row: { id: string; archived: number }): void {
  if (row.archived === 1) {
    throw new AppError(
      'VALIDATION_ERROR',
      `Workflow '${row.id}' is archived: unarchive it first (POST /api/v1/workflows/${row.id}/unarchive)`,
      { id: row.id, isArchived: true },
    );
  }
}
