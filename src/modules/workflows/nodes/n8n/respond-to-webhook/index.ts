import type { Static } from 'typebox';
import { Type } from 'typebox';
import { assertNever } from '../../../../../core/errors.js';
import { isValidHeader } from '../../../../../core/http/header-check.js';
import { type JwtCredential, signJwt } from '../../../credentials/jwt.js';
import { defineNode, type NodeExecutionContext, NodeOperationError } from '../../../engine/node-type.js';
import { credentialRefOf } from '../../../engine/types.js';

/**
 * n8n's Respond to Webhook (v1, 1.1, 1.2, 1.3): answers the webhook of a workflow whose Webhook node
 * responds "Using 'Respond to Webhook' node", with n8n's `respondWith` kinds, `options.responseCode`,
 * `options.responseHeaders` and `options.responseKey`; `binary` answers with the bytes of the first
 * item's binary property; `jwt` answers `{ token }` signed with the node's jwtAuth credential.
 */
const N8nRespondParameters = Type.Object(
  {
    respondWith: Type.Enum(
      [
        'allIncomingItems',
        'firstIncomingItem',
        'json',
        'text',
        'binary',
        'jwt',
        'noData',
        'redirect',
      ] as const,
      { default: 'firstIncomingItem' },
    ),
    responseBody: Type.Optional(Type.Unknown()),
    redirectURL: Type.Optional(Type.String()),
    /** `binary`: the first item's first binary property, or the one `inputFieldName` names. */
    responseDataSource: Type.Optional(
      Type.Enum(['automatically', 'set'] as const, { default: 'automatically' }),
    ),
    inputFieldName: Type.Optional(Type.String({ minLength: 1, maxLength: 200, default: 'data' })),
    /** `jwt`: the claims signed with the node's jwtAuth credential (JSON text or an object). */
    payload: Type.Optional(Type.Unknown()),
    options: Type.Object(
      {
        responseCode: Type.Optional(Type.Integer({ minimum: 200, maximum: 599 })),
        responseHeaders: Type.Optional(
          Type.Object(
            {
              entries: Type.Array(
                Type.Object({ name: Type.String(), value: Type.String() }, { additionalProperties: false }),
                { maxItems: 100 },
              ),
            },
            { additionalProperties: false },
          ),
        ),
        responseKey: Type.Optional(Type.String()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

export const n8nRespondToWebhookNode = defineNode({
  type: 'n8n-nodes-base.respondToWebhook',
  versions: [1, 1.1, 1.2, 1.3],
  schema: N8nRespondParameters,
  async execute(ctx) {
    const p = await ctx.params(0);
    const headers: Record<string, string> = {};
    for (const { name, value } of p.options.responseHeaders?.entries ?? []) {
      if (!isValidHeader(name, value))
        throw new NodeOperationError(`Response header '${name.slice(0, 100)}' is not a valid HTTP header`);
      headers[name.toLowerCase()] = value;
    }
    const wrap = (body: unknown) => (p.options.responseKey ? { [p.options.responseKey]: body } : body);
    let statusCode = p.options.responseCode ?? 200;
    let body: unknown = null;
    let bodyBase64: string | undefined;
    switch (p.respondWith) {
      case 'firstIncomingItem':
        body = wrap(ctx.items[0]?.json ?? {});
        break;
      case 'allIncomingItems':
        body = wrap(ctx.items.map((i) => i.json));
        break;
      case 'json':
        body = wrap(typeof p.responseBody === 'string' ? parseJson(p.responseBody) : (p.responseBody ?? {}));
        break;
      case 'text':
        body = typeof p.responseBody === 'string' ? p.responseBody : JSON.stringify(p.responseBody ?? '');
        headers['content-type'] ??= 'text/plain; charset=utf-8';
        break;
      case 'binary': {
        const binary = ctx.items[0]?.binary;
        const property =
          p.responseDataSource === 'set' ? (p.inputFieldName ?? 'data') : Object.keys(binary ?? {})[0];
        if (!binary || property === undefined)
          throw new NodeOperationError('No binary data exists on the first item!');
        const file = binary[property];
        if (!file) throw new NodeOperationError(`The first item has no binary property '${property}'`);
        bodyBase64 = file.data;
        headers['content-type'] ??= file.mimeType;
        break;
      }
      case 'jwt': {
        const claims = typeof p.payload === 'string' ? parseJson(p.payload) : (p.payload ?? {});
        if (claims === null || typeof claims !== 'object' || Array.isArray(claims))
          throw new NodeOperationError('The JWT payload must be a JSON object');
        const credential = await jwtCredentialOf(ctx);
        try {
          body = { token: await signJwt(credential, claims as Record<string, unknown>) };
        } catch (error) {
          throw new NodeOperationError('Error signing JWT token', { description: (error as Error).message });
        }
        break;
      }
      case 'noData':
        break;
      case 'redirect':
        if (!p.redirectURL || !/^https?:\/\//i.test(p.redirectURL))
          throw new NodeOperationError('Redirect URL must be an http(s) URL');
        statusCode = p.options.responseCode ?? 307;
        headers.location = p.redirectURL;
        break;
      default:
        assertNever(p.respondWith);
    }
    if (body !== null && typeof body !== 'string')
      headers['content-type'] ??= 'application/json; charset=utf-8';
    return {
      kind: 'respond',
      output: [ctx.items],
      response: { statusCode, headers, body, ...(bodyBase64 !== undefined ? { bodyBase64 } : {}) },
    };
  },
});

/** The node's jwtAuth credential (n8n exports `{ jwtAuth: { id, name } }`). */
async function jwtCredentialOf(
  ctx: NodeExecutionContext<Static<typeof N8nRespondParameters>>,
): Promise<JwtCredential> {
  const ref = credentialRefOf(ctx.node.credentials?.jwtAuth);
  if (!ref) throw new NodeOperationError('Node does not have any credentials set for "jwtAuth"');
  return (await ctx.credential(ref)) as JwtCredential;
}

/** n8n's JSON response body is text the user typed: invalid JSON is the node's error, named as n8n does. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new NodeOperationError("Invalid JSON in 'Response Body' field");
  }
}
