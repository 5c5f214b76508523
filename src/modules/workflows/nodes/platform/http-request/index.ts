import { Type } from 'typebox';
import { assertNever } from '../../../../../core/errors.js';
import { redactSecrets } from '../../../../../core/redact.js';
import { credentialSecrets } from '../../../engine/credential-redaction.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';

const HttpRequestParameters = Type.Object({
  method: Type.Enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const, { default: 'GET' }),
  url: Type.String({ minLength: 1, pattern: '^https?://' }),
  headers: Type.Record(Type.String(), Type.String(), { default: {} }),
  query: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
    default: {},
  }),
  /** A string is sent as is; any other JSON value as JSON. */
  body: Type.Optional(Type.Unknown()),
  /**
   * Credential id. Its data decides the auth: `{token}` → Bearer, `{user, password}` → Basic,
   * `{name, value}` → that header.
   */
  credential: Type.Optional(Type.String({ minLength: 1 })),
  timeout: Type.Integer({ minimum: 1, maximum: 300_000, default: 30_000 }),
  responseFormat: Type.Enum(['json', 'text'] as const, { default: 'json' }),
  /** Output `{statusCode, headers, body}` instead of the body alone. */
  fullResponse: Type.Boolean({ default: false }),
  /** Pass non-2xx responses on instead of failing. */
  neverError: Type.Boolean({ default: false }),
});

function authHeaders(cred: Record<string, string>): Record<string, string> {
  if (cred.token !== undefined) return { authorization: `Bearer ${cred.token}` };
  if (cred.user !== undefined && cred.password !== undefined) {
    return { authorization: `Basic ${Buffer.from(`${cred.user}:${cred.password}`).toString('base64')}` };
  }
  if (cred.name !== undefined && cred.value !== undefined) return { [cred.name.toLowerCase()]: cred.value };
  throw new NodeOperationError('Credential has no token, user/password or name/value');
}

function parseBody(format: 'json' | 'text', text: string): Json {
  switch (format) {
    case 'json':
      if (text.trim() === '') return null;
      try {
        return JSON.parse(text) as Json;
      } catch {
        throw new NodeOperationError('Response is not JSON', { description: text.slice(0, 500) });
      }
    case 'text':
      return text;
    default:
      return assertNever(format);
  }
}

/** One outbound request per item, through the guarded `deps.http` only. */
export const httpRequestNode = defineNode({
  type: 'n8n-nodes-platform.httpRequest',
  schema: HttpRequestParameters,
  async execute(ctx) {
    const out: Item[] = [];
    const items = ctx.items.length > 0 ? ctx.items : [{ json: {} }];
    for (let i = 0; i < items.length; i++) {
      const p = await ctx.params(i);
      const url = new URL(p.url);
      for (const [k, v] of Object.entries(p.query)) url.searchParams.set(k, String(v));
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(p.headers)) headers[k.toLowerCase()] = v;
      const credentialHeaders: string[] = [];
      let secrets: string[] = [];
      if (p.credential !== undefined) {
        const data = await ctx.credential(p.credential);
        secrets = credentialSecrets(data);
        const auth = authHeaders(data);
        Object.assign(headers, auth);
        credentialHeaders.push(...Object.keys(auth));
      }
      let body: string | undefined;
      if (p.body !== undefined && p.method !== 'GET' && p.method !== 'HEAD') {
        body = typeof p.body === 'string' ? p.body : JSON.stringify(p.body);
        if (typeof p.body !== 'string') headers['content-type'] ??= 'application/json';
      }
      const res = await ctx.deps.http({
        method: p.method,
        url: url.toString(),
        headers,
        timeoutMs: p.timeout,
        credentialHeaders,
        ...(body !== undefined ? { body } : {}),
      });
      if ((res.status < 200 || res.status >= 300) && !p.neverError) {
        // The body may echo what the credential injected: the error keeps the status, not the secret.
        // Redacted before the cut, so no prefix of a secret is left at the end.
        throw new NodeOperationError(`Request failed with status ${res.status}`, {
          description: redactSecrets(res.body, secrets).slice(0, 1000),
        });
      }
      const parsed = parseBody(p.responseFormat, res.body);
      if (p.fullResponse) {
        out.push({ json: { statusCode: res.status, headers: res.headers, body: parsed } });
      } else if (Array.isArray(parsed)) {
        for (const el of parsed)
          out.push({ json: el !== null && typeof el === 'object' && !Array.isArray(el) ? el : { data: el } });
      } else {
        out.push({ json: parsed !== null && typeof parsed === 'object' ? parsed : { data: parsed } });
      }
    }
    return output(out);
  },
});
