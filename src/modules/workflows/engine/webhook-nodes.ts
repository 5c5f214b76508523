import type { Static } from 'typebox';
import { WebhookParameters } from '../nodes/webhook.js';
import { withDefaults } from './parameters.js';
import type { WorkflowDefinition } from './types.js';

export type WebhookParams = Static<typeof WebhookParameters>;

/** A webhook node's parsed parameters, as the service registers and answers it. */
export interface WebhookNodeInfo {
  nodeName: string;
  nodeId: string;
  /** Normalised: no leading or trailing slash. */
  path: string;
  httpMethod: WebhookParams['httpMethod'];
  authentication: WebhookParams['authentication'];
  /** Credential id for the authentication (parameter `credential`, else node.credentials[authentication]). */
  credentialId: string | null;
  responseMode: WebhookParams['responseMode'];
  responseCode: number;
  responseData: WebhookParams['responseData'];
  options: {
    rawBody: boolean;
    bodyLimitBytes: number;
    /** An expression (`={{ … }}`) over the trigger item; evaluate with `evaluateDedupeKey`. */
    dedupeKey: string | null;
    hmacHeader: string;
    hmacTimestampHeader: string;
    hmacRequireTimestamp: boolean;
  };
}

/** The enabled webhook nodes of a workflow with their parameters (defaults applied). */
export function webhookNodesOf(def: WorkflowDefinition): WebhookNodeInfo[] {
  return def.nodes
    .filter((n) => n.type === 'webhook' && !n.disabled)
    .map((node) => {
      const p = withDefaults(WebhookParameters, node.parameters) as WebhookParams;
      const credentials = node.credentials ?? {};
      return {
        nodeName: node.name,
        nodeId: node.id,
        path: trimSlashes(String(p.path ?? '')),
        httpMethod: p.httpMethod,
        authentication: p.authentication,
        credentialId: p.credential ?? credentials[p.authentication] ?? Object.values(credentials)[0] ?? null,
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
        },
      };
    });
}

/** `/a/b/` → `a/b`. A loop, not `/\/+$/`: that regex is quadratic on a long run of slashes. */
export function trimSlashes(path: string): string {
  let start = 0;
  let end = path.length;
  while (start < end && path.charCodeAt(start) === 47) start++;
  while (end > start && path.charCodeAt(end - 1) === 47) end--;
  return path.slice(start, end);
}
