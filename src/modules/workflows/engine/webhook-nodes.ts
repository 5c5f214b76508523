import type { NodeRegistry } from './node-type.js';
import type { WebhookNodeInfo, WorkflowDefinition } from './types.js';

export type { WebhookHttpMethod, WebhookNodeInfo } from './types.js';

/** Headers a workflow may not set on a webhook's answer: the HTTP server and the socket own them. */
export const RESERVED_RESPONSE_HEADERS: ReadonlySet<string> = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
]);

/**
 * The enabled webhook nodes of a workflow with their parameters (defaults applied), one per method.
 * Each webhook node type parses its own parameters (`NodeType.webhook`); the engine knows none of them.
 */
export function webhookNodesOf(def: WorkflowDefinition, registry: NodeRegistry): WebhookNodeInfo[] {
  const out: WebhookNodeInfo[] = [];
  for (const node of def.nodes) {
    if (node.disabled) continue;
    const parse = registry.get(node.type, node.typeVersion)?.webhook?.parse;
    if (parse) out.push(...parse(node));
  }
  return out;
}

/** `/a/b/` → `a/b`. A loop, not `/\/+$/`: that regex is quadratic on a long run of slashes. */
export function trimSlashes(path: string): string {
  let start = 0;
  let end = path.length;
  while (start < end && path.charCodeAt(start) === 47) start++;
  while (end > start && path.charCodeAt(end - 1) === 47) end--;
  return path.slice(start, end);
}
