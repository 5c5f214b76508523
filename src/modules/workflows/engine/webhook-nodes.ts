import type { NodeRegistry } from './node-type.js';
import type { WorkflowDefinition } from './types.js';

export type WebhookHttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

/** A webhook node's parsed parameters, as the service registers and answers it. */
export interface WebhookNodeInfo {
  nodeName: string;
  nodeId: string;
  /**
   * Normalised: no leading or trailing slash. With path parameters, n8n's dynamic webhook:
   * `{webhookId}/users/:id`, the template a request's path is matched against.
   */
  path: string;
  /** The first segment of a path with parameters (the node's webhook id), else null. */
  dynamicPrefix: string | null;
  httpMethod: WebhookHttpMethod;
  /** `jwtAuth`: n8n's Webhook checking a bearer JWT against a jwtAuth credential. */
  authentication: 'none' | 'basicAuth' | 'headerAuth' | 'queryAuth' | 'apiKey' | 'hmac' | 'jwtAuth';
  /** Credential id for the authentication (parameter `credential`, else node.credentials[authentication]). */
  credentialId: string | null;
  responseMode: 'onReceived' | 'lastNode' | 'responseNode';
  responseCode: number;
  responseData: 'firstEntryJson' | 'allEntries' | 'noData' | 'firstEntryBinary';
  options: {
    rawBody: boolean;
    bodyLimitBytes: number;
    /** An expression (`={{ … }}`) over the trigger item; evaluate with `evaluateDedupeKey`. */
    dedupeKey: string | null;
    hmacHeader: string;
    hmacTimestampHeader: string;
    hmacRequireTimestamp: boolean;
    /** n8n's `ipWhitelist`: the addresses and ranges that may call (null: any). */
    ipAllowList: string[] | null;
    /**
     * n8n's binary bodies: `always` (v1 `binaryData`), `unparsed` (v2: a body that is not JSON, a
     * form or text) or `never` (the platform's node). Multipart files are binary for n8n's node.
     */
    binaryBody: 'always' | 'unparsed' | 'never';
    /** The binary property for a body, or the prefix of uploaded files' properties; null: n8n's default. */
    binaryPropertyName: string | null;
    /** Where `rawBody` goes: `json.rawBody` (base64; the platform's node) or binary `data` (n8n's). */
    rawBodyAs: 'json' | 'binary';
  };
  /** `firstEntryBinary`: the binary property of the last node's first item that is the answer. */
  responseBinaryPropertyName: string;
}

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
