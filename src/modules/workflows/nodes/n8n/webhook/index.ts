import { type Static, Type } from 'typebox';
import { isValidHeader } from '../../../../../core/http/header-check.js';
import { isValidCidr } from '../../../../../core/http/ip-rules.js';
import { shownWhen, shownWhenAny, versionAtLeast } from '../../../engine/display-options.js';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, output } from '../../../engine/node-type.js';
import { withDefaults } from '../../../engine/parameters.js';
import { credentialRefOf, type WorkflowNode } from '../../../engine/types.js';
import {
  RESERVED_RESPONSE_HEADERS,
  trimSlashes,
  type WebhookNodeInfo,
} from '../../../engine/webhook-nodes.js';
import { HTTP_METHODS, WebhookParameters, type WebhookParams } from '../../platform/webhook/index.js';

/**
 * n8n's Webhook trigger (v1, 1.1, 2, 2.1) in n8n's parameter shape. The service registers it at
 * `/webhook/{path}` like the platform's own `webhook` node (each parses its parameters into one
 * description). A path with parameters (`users/:id`) is n8n's dynamic webhook, reached under the node's
 * webhook id. Bodies it does not parse (v2; v1 with `options.binaryData`), uploaded files and
 * `options.rawBody` arrive as binary data, as in n8n. `responseMode: 'streaming'` (v2.1's "Streaming
 * Response") answers n8n's JSON lines as the streaming nodes (an AI Agent) send them, on the Chat
 * Trigger's stream writer. What the platform cannot do yet is refused at save, never ignored: the
 * options not below.
 */

const Method = Type.Enum(HTTP_METHODS);

const N8nWebhookParameters = Type.Object(
  {
    path: Type.String({
      minLength: 1,
      maxLength: 300,
      pattern: "^/?[A-Za-z0-9._~@!$&'()*+,;=/:-]+$",
      description:
        'With path parameters (`users/:id`) the webhook is reached at /webhook/{webhookId}/users/42, as in n8n',
    }),
    httpMethod: Type.Union([Method, Type.Array(Method, { minItems: 1, uniqueItems: true })], {
      default: 'GET',
    }),
    multipleMethods: Type.Optional(Type.Boolean()),
    authentication: Type.Enum(['none', 'basicAuth', 'headerAuth', 'jwtAuth'] as const, { default: 'none' }),
    /** `streaming`: n8n's Webhook v2.1 (n8n's server streams whatever the version says). */
    responseMode: Type.Enum(['onReceived', 'lastNode', 'responseNode', 'streaming'] as const, {
      default: 'onReceived',
    }),
    /** v1 and 1.1: the code of an onReceived / lastNode answer (v2 moved it into options). */
    responseCode: Type.Optional(
      Type.Integer({
        minimum: 200,
        maximum: 599,
        ...shownWhen({ '@version': [1, 1.1] }, { responseMode: ['responseNode'] }),
      }),
    ),
    responseData: Type.Enum(['firstEntryJson', 'firstEntryBinary', 'allEntries', 'noData'] as const, {
      default: 'firstEntryJson',
      ...shownWhen({ responseMode: ['lastNode'] }),
    }),
    /** With `firstEntryBinary`: the binary property of the last node's first item that is the answer. */
    responseBinaryPropertyName: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        default: 'data',
        ...shownWhen({ responseMode: ['lastNode'], responseData: ['firstEntryBinary'] }),
      }),
    ),
    options: Type.Object(
      {
        rawBody: Type.Optional(
          Type.Boolean(
            shownWhenAny(
              { show: { '@version': [1] }, hide: { binaryData: [true], noResponseBody: [true] } },
              { hide: { noResponseBody: [true], '@version': [1] } },
            ),
          ),
        ),
        /** v1: the whole body as binary data (v2 does so for any body it does not parse). */
        binaryData: Type.Optional(
          Type.Boolean(shownWhen({ '/httpMethod': ['PATCH', 'PUT', 'POST'], '@version': [1] })),
        ),
        /** The binary property a body (`data`) or the uploaded files (`data0`, `data1`, …) go to. */
        binaryPropertyName: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 200,
            ...shownWhenAny({ show: { binaryData: [true], '@version': [1] } }, { hide: { '@version': [1] } }),
          }),
        ),
        noResponseBody: Type.Optional(
          Type.Boolean(shownWhen({ '/responseMode': ['onReceived'] }, { rawBody: [true] })),
        ),
        /** Comma-separated addresses or CIDR ranges; others get 403 (empty: everyone). */
        ipWhitelist: Type.Optional(Type.String({ maxLength: 4000 })),
        /**
         * n8n's CORS option (every version; n8n adds it to nodes that support CORS): `*` (default) or
         * comma-separated origins whose pages may read the answers (webhooks/cors.ts).
         */
        allowedOrigins: Type.Optional(Type.String({ maxLength: 4_000 })),
        /** A bot's user agent gets 403 (n8n's `isbot`; here webhooks/bot-agents.ts). */
        ignoreBots: Type.Optional(Type.Boolean()),
        /** `onReceived`: this text is the answer's body instead of "Workflow was started". */
        responseData: Type.Optional(Type.String({ maxLength: 100_000 })),
        /** `lastNode` + `firstEntryJson`: the answer's content type. */
        responseContentType: Type.Optional(Type.String({ maxLength: 200 })),
        /** `lastNode` + `firstEntryJson`: only this (dotted) property of the first entry is answered. */
        responsePropertyName: Type.Optional(Type.String({ maxLength: 200 })),
        responseHeaders: Type.Optional(
          Type.Object(
            {
              entries: Type.Optional(
                Type.Array(
                  Type.Object(
                    {
                      name: Type.String({ default: '', maxLength: 200 }),
                      value: Type.String({ default: '', maxLength: 8_000 }),
                    },
                    { additionalProperties: false },
                  ),
                  { maxItems: 50 },
                ),
              ),
            },
            { additionalProperties: false },
          ),
        ),
        responseCode: Type.Optional(
          Type.Object(
            {
              values: Type.Object(
                {
                  responseCode: Type.Union(
                    [Type.Integer({ minimum: 200, maximum: 599 }), Type.Literal('customCode')],
                    {
                      default: 200,
                    },
                  ),
                  customCode: Type.Optional(
                    Type.Integer({
                      minimum: 200,
                      maximum: 599,
                      ...shownWhen({ responseCode: ['customCode'] }),
                    }),
                  ),
                },
                { additionalProperties: false },
              ),
            },
            {
              additionalProperties: false,
              ...shownWhen({ '@version': [versionAtLeast(2)] }, { '/responseMode': ['responseNode'] }),
            },
          ),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

export const n8nWebhookNode = defineNode({
  type: 'n8n-nodes-base.webhook',
  versions: [1, 1.1, 2, 2.1],
  schema: N8nWebhookParameters,
  trigger: true,
  inputs: 0,
  webhook: { parse: n8nWebhook },
  check(params) {
    const problems = [];
    for (const [name, value] of Object.entries({ path: params.path, httpMethod: params.httpMethod })) {
      if (isExpression(value))
        problems.push({
          path: `parameters.${name}`,
          message: 'must be fixed: a webhook is registered before any run',
        });
    }
    if (!isExpression(params.path)) problems.push(...pathParameterProblems(params.path));
    const allowed = params.options.ipWhitelist;
    if (typeof allowed === 'string' && !isExpression(allowed)) {
      const bad = allowListOf(allowed).filter((entry) => !isValidCidr(entry));
      if (bad.length > 0)
        problems.push({
          path: 'parameters.options.ipWhitelist',
          message: `${bad.map((b) => `'${b.slice(0, 60)}'`).join(', ')} is not an IP address or CIDR range`,
        });
    } else if (allowed !== undefined)
      problems.push({
        path: 'parameters.options.ipWhitelist',
        message: 'must be fixed: it guards the webhook before any run',
      });
    for (const name of ['binaryPropertyName', 'binaryData'] as const)
      if (isExpression(params.options[name]))
        problems.push({
          path: `parameters.options.${name}`,
          message: 'must be fixed: it shapes the trigger item',
        });
    // Read when the webhook is registered, before any run: an expression would have nothing to read.
    const o = params.options;
    for (const name of [
      'ignoreBots',
      'responseData',
      'responseContentType',
      'responsePropertyName',
      'allowedOrigins',
    ] as const)
      if (isExpression(o[name]))
        problems.push({
          path: `parameters.options.${name}`,
          message: 'must be fixed: the webhook answers before any run',
        });
    for (const [i, h] of (o.responseHeaders?.entries ?? []).entries()) {
      // isExpression narrows: the names kept as plain strings for the checks after it.
      const name = String(h.name);
      if (isExpression(h.name) || isExpression(h.value))
        problems.push({
          path: `parameters.options.responseHeaders.entries[${i}]`,
          message: 'must be fixed: the webhook answers before any run',
        });
      else if (
        name !== '' &&
        (!isValidHeader(name, String(h.value)) || RESERVED_RESPONSE_HEADERS.has(name.toLowerCase()))
      )
        problems.push({
          path: `parameters.options.responseHeaders.entries[${i}].name`,
          message: `'${name.slice(0, 60)}' is not a header the webhook may set`,
        });
    }
    // n8n registers every method of a list whatever `multipleMethods` says (exports carry lists with
    // it false, and a single method with it true): the list is what counts, as there.
    return problems;
  },
  async execute(ctx) {
    return output(ctx.items);
  },
});

/** The response code an n8n webhook answers with (v1 top-level, v2 under options). */
function n8nWebhookResponseCode(params: {
  responseCode?: number;
  options?: { responseCode?: { values: { responseCode: number | 'customCode'; customCode?: number } } };
}): number {
  const values = params.options?.responseCode?.values;
  if (values) return values.responseCode === 'customCode' ? (values.customCode ?? 200) : values.responseCode;
  return params.responseCode ?? 200;
}

const PARAMETER_SEGMENT = /^:[A-Za-z0-9_]{1,64}$/;

/** `:name` only as a whole segment, each name once (n8n's dynamic webhook paths). */
function pathParameterProblems(path: string) {
  const names = new Set<string>();
  for (const segment of path.split('/')) {
    if (!segment.includes(':')) continue;
    if (!PARAMETER_SEGMENT.test(segment))
      return [
        {
          path: 'parameters.path',
          message: `segment '${segment}' is not a path parameter: use ':name' (letters, digits, _) as a whole segment`,
        },
      ];
    if (names.has(segment))
      return [{ path: 'parameters.path', message: `path parameter '${segment}' appears twice` }];
    names.add(segment);
  }
  return [];
}

/** n8n's `ipWhitelist`: comma-separated entries, blanks ignored. */
function allowListOf(text: string): string[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
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
    responseMode: p.responseMode === 'streaming' ? 'lastNode' : p.responseMode,
    ...(p.responseMode === 'streaming' ? { streaming: true } : {}),
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
    ...(p.options.ignoreBots ? { ignoreBots: true } : {}),
    cors: { allowedOrigins: p.options.allowedOrigins ?? (guarded(p) ? null : '*'), methods },
    reply: {
      headers: Object.fromEntries(
        (p.options.responseHeaders?.entries ?? []).filter((h) => h.name !== '').map((h) => [h.name, h.value]),
      ),
      receivedBody: p.options.responseData || null,
      contentType: p.options.responseContentType || null,
      propertyName: p.options.responsePropertyName || null,
    },
  }));
}

/**
 * A webhook that trusts its callers by address (`ipWhitelist`) or by credential: n8n's CORS default
 * `*` would let any page opened inside the allow-list (or in a browser holding the credential) read
 * its answers, so without an explicit `allowedOrigins` no origin is allowed (docs/decisions.md, L4).
 */
function guarded(p: Static<typeof N8nWebhookParameters>): boolean {
  return p.authentication !== 'none' || (p.options.ipWhitelist ?? '').trim() !== '';
}

/** n8n's credential type per webhook authentication. */
const WEBHOOK_CREDENTIAL_TYPES = {
  basicAuth: 'httpBasicAuth',
  headerAuth: 'httpHeaderAuth',
  jwtAuth: 'jwtAuth',
} as const;
