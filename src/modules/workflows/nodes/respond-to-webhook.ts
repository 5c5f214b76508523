import { Type } from 'typebox';
import { assertNever } from '../../../core/errors.js';
import { isValidHeader } from '../../../core/http/header-check.js';
import { defineNode, NodeOperationError } from '../engine/node-type.js';

/** Header names and values come from expressions over the request: one CR/LF must not split the head. */
function checkedHeader(name: string, value: string): void {
  if (isValidHeader(name, value)) return;
  throw new NodeOperationError(`Response header '${name.slice(0, 100)}' is not a valid HTTP header`, {
    description: 'Header names are tokens; values may not hold control characters such as CR or LF.',
  });
}

export const RespondToWebhookParameters = Type.Object({
  respondWith: Type.Enum(['json', 'text', 'noData'] as const, { default: 'json' }),
  /** 200–599: an interim 1xx is no answer (the caller would wait for ever). */
  responseCode: Type.Integer({ minimum: 200, maximum: 599, default: 200 }),
  responseHeaders: Type.Record(Type.String(), Type.String(), { default: {} }),
  /** For `json`: any JSON value (default: the first input item); for `text`: a string. */
  responseBody: Type.Optional(Type.Unknown()),
});

/** Sets the webhook's response (responseMode `responseNode`); passes its items on. */
export const respondToWebhookNode = defineNode({
  type: 'respondToWebhook',
  schema: RespondToWebhookParameters,
  async execute(ctx) {
    const p = await ctx.params(0);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(p.responseHeaders)) {
      checkedHeader(k, v);
      headers[k.toLowerCase()] = v;
    }
    let body: unknown;
    switch (p.respondWith) {
      case 'json':
        body = p.responseBody !== undefined ? p.responseBody : (ctx.items[0]?.json ?? {});
        headers['content-type'] ??= 'application/json; charset=utf-8';
        break;
      case 'text':
        body = typeof p.responseBody === 'string' ? p.responseBody : JSON.stringify(p.responseBody ?? '');
        headers['content-type'] ??= 'text/plain; charset=utf-8';
        break;
      case 'noData':
        body = null;
        break;
      default:
        assertNever(p.respondWith);
    }
    return {
      kind: 'respond',
      output: [ctx.items],
      response: { statusCode: p.responseCode, headers, body },
    };
  },
});
