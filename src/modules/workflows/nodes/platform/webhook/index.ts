import { type Static, Type } from 'typebox';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, output } from '../../../engine/node-type.js';
import { withDefaults } from '../../../engine/parameters.js';
import { credentialRefOf, type WorkflowNode } from '../../../engine/types.js';
import { trimSlashes, type WebhookNodeInfo } from '../../../engine/webhook-nodes.js';

const WEBHOOK_AUTHENTICATIONS = ['none', 'basicAuth', 'headerAuth', 'queryAuth', 'apiKey', 'hmac'] as const;
const WEBHOOK_RESPONSE_MODES = ['onReceived', 'lastNode', 'responseNode'] as const;
const WEBHOOK_RESPONSE_DATA = ['firstEntryJson', 'allEntries', 'noData'] as const;
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;

export const WebhookParameters = Type.Object({
  /** `/webhook/{path}`; no leading slash needed. */
  path: Type.String({ minLength: 1, maxLength: 300, pattern: "^/?[A-Za-z0-9._~:@!$&'()*+,;=/-]+$" }),
  httpMethod: Type.Enum(HTTP_METHODS, { default: 'POST' }),
  authentication: Type.Enum(WEBHOOK_AUTHENTICATIONS, { default: 'none' }),
  /** Credential id for basicAuth, headerAuth, queryAuth and hmac (or node.credentials[authentication]). */
  credential: Type.Optional(Type.String({ minLength: 1 })),
  responseMode: Type.Enum(WEBHOOK_RESPONSE_MODES, { default: 'onReceived' }),
  /** 200–599: an interim 1xx is no answer (the caller would wait for ever). */
  responseCode: Type.Integer({ minimum: 200, maximum: 599, default: 200 }),
  responseData: Type.Enum(WEBHOOK_RESPONSE_DATA, { default: 'firstEntryJson' }),
  options: Type.Object(
    {
      /** Keep the raw body (`$json.rawBody`, base64) besides the parsed one. */
      rawBody: Type.Boolean({ default: false }),
      bodyLimitBytes: Type.Integer({ minimum: 1, maximum: 104_857_600, default: 1_048_576 }),
      /** Expression over the request (`$json.headers`, `$json.body`) whose value dedupes deliveries for 24 h. */
      dedupeKey: Type.Optional(Type.String({ minLength: 1 })),
      /** Header carrying the HMAC signature (authentication `hmac`). */
      hmacHeader: Type.String({ minLength: 1, default: 'X-Signature' }),
      /**
       * Header with the Unix time (seconds) the sender signed with the body (`{time}.{body}`); when
       * sent, it must be within WEBHOOK_HMAC_TOLERANCE_SECONDS of now, so old deliveries cannot be replayed.
       */
      hmacTimestampHeader: Type.String({ minLength: 1, default: 'X-Store-Timestamp' }),
      /** Refuse HMAC deliveries without the timestamp header (turn on once every sender sends it). */
      hmacRequireTimestamp: Type.Boolean({ default: false }),
    },
    { default: {} },
  ),
});

/**
 * Trigger: the service turns an HTTP request into one item `{headers, params, query, body}` and starts
 * the run here; the node passes it on unchanged.
 */
export const webhookNode = defineNode({
  type: 'n8n-nodes-platform.webhook',
  schema: WebhookParameters,
  trigger: true,
  inputs: 0,
  webhook: { parse: (node) => [platformWebhook(node)] },
  check(params) {
    const key = params.options?.dedupeKey;
    return key !== undefined && !isExpression(key)
      ? [{ path: 'parameters.options.dedupeKey', message: 'must be an expression (={{ … }})' }]
      : [];
  },
  async execute(ctx) {
    return output(ctx.items);
  },
});

export type WebhookParams = Static<typeof WebhookParameters>;

/** The node's parameters (defaults applied) as the service registers and answers it. */
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
