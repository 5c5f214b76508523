import type { Static } from 'typebox';
import { allowListOf, N8nWebhookParameters, n8nWebhookResponseCode } from '../nodes/n8n/webhook.js';
import { WebhookParameters } from '../nodes/webhook.js';
import { withDefaults } from './parameters.js';
import { credentialRefOf, type WorkflowDefinition, type WorkflowNode } from './types.js';

export type WebhookParams = Static<typeof WebhookParameters>;

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
  httpMethod: WebhookParams['httpMethod'];
  /** `jwtAuth`: n8n's Webhook checking a bearer JWT against a jwtAuth credential. */
  authentication: WebhookParams['authentication'] | 'jwtAuth';
  /** Credential id for the authentication (parameter `credential`, else node.credentials[authentication]). */
  credentialId: string | null;
  responseMode: WebhookParams['responseMode'];
  responseCode: number;
  responseData: WebhookParams['responseData'] | 'firstEntryBinary';
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

/** The enabled webhook nodes of a workflow with their parameters (defaults applied), one per method. */
export function webhookNodesOf(def: WorkflowDefinition): WebhookNodeInfo[] {
  const out: WebhookNodeInfo[] = [];
  for (const node of def.nodes) {
    if (node.disabled) continue;
    if (node.type === 'n8n-nodes-platform.webhook') out.push(platformWebhook(node));
    else if (node.type === 'n8n-nodes-base.webhook') out.push(...n8nWebhook(node));
  }
  return out;
}

function platformWebhook(node: WorkflowNode): WebhookNodeInfo {
  const p = withDefaults(WebhookParameters, node.parameters) as WebhookParams;
  const credentials = node.credentials ?? {};
  return {
    nodeName: node.name,
    nodeId: node.id,
    path: trimSlashes(String(p.path ?? '')),
    dynamicPrefix: null,
    httpMethod: p.httpMethod,
    authentication: p.authentication,
    credentialId:
      p.credential ??
      credentialRefOf(credentials[p.authentication]) ??
      credentialRefOf(Object.values(credentials)[0]),
    responseMode: p.responseMode,
    responseCode: p.responseCode,
    responseData: p.responseData,
    options: {
      rawBody: p.options.rawBody,
      bodyLimitBytes: p.options.bodyLimitBytes,
      dedupeKey: p.options.dedupeKey ?? null,
      hmacHeader: p.options.hmacHeader,
      hmacTimestampHeader: p.options.hmacTimestampHeader,
      hmacRequireTimestamp: p.options.hmacRequireTimestamp,
      ipAllowList: null,
      binaryBody: 'never',
      binaryPropertyName: null,
      rawBodyAs: 'json',
    },
    responseBinaryPropertyName: 'data',
  };
}

/** n8n's Webhook node as the same description; its credential sits under n8n's credential type name. */
function n8nWebhook(node: WorkflowNode): WebhookNodeInfo[] {
  const p = withDefaults(N8nWebhookParameters, node.parameters) as Static<typeof N8nWebhookParameters>;
  const defaults = withDefaults(WebhookParameters, { path: p.path }) as WebhookParams;
  const credentialType =
    p.authentication === 'none'
      ? null
      : WEBHOOK_CREDENTIAL_TYPES[p.authentication as 'basicAuth' | 'headerAuth' | 'jwtAuth'];
  const credentials = node.credentials ?? {};
  const methods = Array.isArray(p.httpMethod) ? p.httpMethod : [p.httpMethod];
  const path = trimSlashes(p.path);
  // n8n reaches a path with parameters under the node's webhook id (every n8n export has one).
  const dynamicPrefix = path.split('/').some((s) => s.startsWith(':')) ? (node.webhookId ?? node.id) : null;
  return methods.map((httpMethod) => ({
    nodeName: node.name,
    nodeId: node.id,
    path: dynamicPrefix ? `${dynamicPrefix}/${path}` : path,
    dynamicPrefix,
    httpMethod,
    authentication: p.authentication,
    credentialId: credentialType
      ? (credentialRefOf(credentials[credentialType]) ?? credentialRefOf(Object.values(credentials)[0]))
      : null,
    responseMode: p.responseMode,
    responseCode: n8nWebhookResponseCode(p),
    responseData: p.options.noResponseBody && p.responseMode === 'onReceived' ? 'noData' : p.responseData,
    options: {
      ...defaults.options,
      rawBody: p.options.rawBody ?? false,
      dedupeKey: null,
      ipAllowList: p.options.ipWhitelist ? allowListOf(p.options.ipWhitelist) : null,
      binaryBody: p.options.binaryData ? 'always' : (node.typeVersion ?? 1) >= 2 ? 'unparsed' : 'never',
      binaryPropertyName: p.options.binaryPropertyName ?? null,
      rawBodyAs: 'binary',
    },
    responseBinaryPropertyName: p.responseBinaryPropertyName ?? 'data',
  }));
}

/** n8n's credential type per webhook authentication. */
const WEBHOOK_CREDENTIAL_TYPES = {
  basicAuth: 'httpBasicAuth',
  headerAuth: 'httpHeaderAuth',
  jwtAuth: 'jwtAuth',
} as const;

/** `/a/b/` → `a/b`. A loop, not `/\/+$/`: that regex is quadratic on a long run of slashes. */
export function trimSlashes(path: string): string {
  let start = 0;
  let end = path.length;
  while (start < end && path.charCodeAt(start) === 47) start++;
  while (end > start && path.charCodeAt(end - 1) === 47) end--;
  return path.slice(start, end);
}
