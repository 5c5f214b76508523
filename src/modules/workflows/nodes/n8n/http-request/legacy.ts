import { STATUS_CODES } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { binaryBytes } from '../../../engine/binary.js';
import { withoutSecrets } from '../../../engine/credential-redaction.js';
import {
  defineNode,
  type NodeExecutionContext,
  NodeOperationError,
  output,
} from '../../../engine/node-type.js';
import type { Item, Json, ValidationProblem } from '../../../engine/types.js';
import {
  type AppliedCredential,
  applyCredential,
  type PreparedRequest,
  secretsOf,
  toOutbound,
} from './build.js';
import { HttpRequestLegacyParameters, type HttpRequestLegacyParams } from './legacy-schema.js';
import { isPredefinedType, predefinedRefusal } from './predefined/index.js';
import { fileItem, statusError } from './response.js';
import { GENERIC_AUTH_TYPES, type GenericAuthType } from './schema.js';

/** v1's own authentication values and the credential type each reads (n8n's credential slot names). */
const V1_AUTH: Partial<Record<HttpRequestLegacyParams['authentication'], GenericAuthType>> = {
  basicAuth: 'httpBasicAuth',
  headerAuth: 'httpHeaderAuth',
  queryAuth: 'httpQueryAuth',
};
const BODY_METHODS = ['PATCH', 'POST', 'PUT'];
/** n8n's v1 waits an hour without a timeout option; the execution's own timeout ends it sooner. */
const DEFAULT_TIMEOUT_MS = 3_600_000;
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * n8n's HTTP Request v1 and v2 (its legacy `HttpRequestV1`/`V2` classes, still imported by n8n and in
 * many published templates): parameters as key/value rows or JSON, body content types, response as
 * JSON, text or a file, full response, split into items. Sent through the same guarded outbound HTTP
 * and credential code as v3/v4; what it cannot do here (digest, OAuth, predefined credential types,
 * proxies, ignoring TLS errors) is refused at save.
 */
export const n8nHttpRequestLegacyNode = defineNode({
  type: 'n8n-nodes-base.httpRequest',
  versions: [1, 2],
  schema: HttpRequestLegacyParameters,
  check: (p) => refusals(p),
  async execute(ctx) {
    if (ctx.items.length === 0) return output([]);
    const first = await ctx.params(0);
    const credential = await credentialOf(ctx, first);
    try {
      const out: Item[] = [];
      for (let i = 0; i < ctx.items.length; i++) {
        const p = i === 0 ? first : await ctx.params(i);
        const { batchSize, batchInterval } = p.options;
        if (i > 0 && batchSize >= 0 && batchInterval > 0 && i % Math.max(batchSize, 1) === 0)
          await sleep(batchInterval);
        const req = legacyRequest(p, credential, ctx.items[i]);
        const res = await ctx.deps.http(toOutbound(req));
        if ((res.status < 200 || res.status >= 300) && !p.options.ignoreResponseCode)
          throw statusError(res, secretsOf(credential));
        out.push(...legacyItems(p, res, ctx.items[i]));
      }
      return output(out);
    } catch (error) {
      throw withoutSecrets(error, secretsOf(credential));
    }
  },
});

/** The request of one item, as v1's request-promise options would send it. */
export function legacyRequest(
  p: HttpRequestLegacyParams,
  credential: AppliedCredential | null,
  item: Item | undefined,
): PreparedRequest {
  const url = typeof p.url === 'string' ? p.url.trim() : p.url;
  if (typeof url !== 'string' || url === '') throw new NodeOperationError('The URL parameter is empty');
  if (!/^https?:\/\//.test(url))
    throw new NodeOperationError(`Invalid URL: ${url}. URL must start with "http" or "https".`);
  const o = p.options;
  const req: PreparedRequest = {
    method: p.requestMethod,
    url,
    qs: {},
    headers: {},
    timeoutMs: o.timeout ?? DEFAULT_TIMEOUT_MS,
    credentialHeaders: [],
    arrayFormat: o.useQueryString ? 'repeat' : 'indices',
    // request follows GET/HEAD redirects unless told not to; only followAllRedirects follows the others.
    ...(follows(p) ? {} : { maxRedirects: 0 }),
  };
  let body: unknown;
  if (p.jsonParameters) {
    const raw = o.bodyContentType === 'raw';
    if (p.sendBinaryData && BODY_METHODS.includes(p.requestMethod)) {
      Object.assign(req, binaryBody(p, item));
    } else if (p.bodyParametersJson !== '') {
      body = raw ? p.bodyParametersJson : jsonOf(p.bodyParametersJson, 'Body Parameters');
    }
    if (p.headerParametersJson !== '') {
      const headers = jsonOf(p.headerParametersJson, 'Headers');
      for (const [k, v] of Object.entries(objectOf(headers))) req.headers[k] = String(v);
    }
    if (p.queryParametersJson !== '')
      req.qs = { ...objectOf(jsonOf(p.queryParametersJson, 'Query Parameters')) };
  } else {
    for (const row of p.queryParametersUi.parameter ?? []) {
      if (UNSAFE_KEYS.has(row.name)) continue;
      const prev = req.qs[row.name];
      req.qs[row.name] =
        prev === undefined ? row.value : Array.isArray(prev) ? [...prev, row.value] : [prev, row.value];
    }
    for (const row of p.headerParametersUi.parameter ?? [])
      req.headers[row.name.toLowerCase()] = String(row.value);
    const fields = p.bodyParametersUi.parameter;
    if (fields !== undefined) {
      const obj: Record<string, unknown> = {};
      for (const row of fields) if (!UNSAFE_KEYS.has(row.name)) obj[row.name] = row.value;
      body = obj;
    }
  }
  if (body !== undefined && req.body === undefined) {
    if (BODY_METHODS.includes(p.requestMethod) && o.bodyContentType === 'multipart-form-data')
      req.body = { kind: 'multipart', fields: Object.entries(objectOf(body)) };
    else if (BODY_METHODS.includes(p.requestMethod) && o.bodyContentType === 'form-urlencoded')
      req.body = { kind: 'form', value: objectOf(body) };
    else if (o.bodyContentType === 'raw')
      req.body = { kind: 'raw', text: typeof body === 'string' ? body : JSON.stringify(body) };
    else req.body = { kind: 'json', value: body };
  }
  if (o.bodyContentCustomMimeType) req.headers['content-type'] = o.bodyContentCustomMimeType;
  if (credential) applyCredential(req, credential);
  if (!Object.keys(req.headers).some((h) => h.toLowerCase() === 'accept'))
    req.headers.accept = ACCEPT[p.responseFormat];
  return req;
}

const follows = (p: HttpRequestLegacyParams): boolean =>
  p.options.followAllRedirects === true ||
  (p.options.followRedirect !== false && (p.requestMethod === 'GET' || p.requestMethod === 'HEAD'));

const ACCEPT: Record<HttpRequestLegacyParams['responseFormat'], string> = {
  json: 'application/json,text/*;q=0.99',
  string: 'application/json,text/html,application/xhtml+xml,application/xml,text/*;q=0.9, */*;q=0.1',
  file: 'application/json,text/html,application/xhtml+xml,application/xml,text/*;q=0.9, image/*;q=0.8, */*;q=0.7',
};

/** `sendBinaryData`: the raw bytes of one property, or multipart files named `key:property,…`. */
function binaryBody(p: HttpRequestLegacyParams, item: Item | undefined): Pick<PreparedRequest, 'body'> {
  const type = p.options.bodyContentType;
  if (type !== 'raw' && type !== 'multipart-form-data')
    throw new NodeOperationError(
      'Sending binary data is only supported when option "Body Content Type" is set to "RAW/CUSTOM" or "FORM-DATA/MULTIPART"!',
    );
  const file = (property: string) => {
    try {
      return binaryBytes(item, property);
    } catch (error) {
      throw new NodeOperationError((error as Error).message);
    }
  };
  if (type === 'raw') {
    const { bytes, meta } = file(p.binaryPropertyName);
    return { body: { kind: 'binary', bytes, mimeType: meta.mimeType } };
  }
  const names = p.binaryPropertyName.split(',').map((s) => s.trim());
  const fields: Array<[string, unknown]> = names.map((entry) => {
    const [key, property] = entry.includes(':') ? (entry.split(':') as [string, string]) : ['file', entry];
    if (!entry.includes(':') && names.length > 1)
      throw new NodeOperationError(
        'If more than one property should be send it is needed to define the in the format: "sendKey1:binaryProperty1,sendKey2:binaryProperty2"',
      );
    const { bytes, meta } = file(property);
    return [key, { file: { bytes, mimeType: meta.mimeType, fileName: meta.fileName ?? key } }];
  });
  return { body: { kind: 'multipart', fields } };
}

/** n8n's v1 output items for one response. */
function legacyItems(
  p: HttpRequestLegacyParams,
  res: { status: number; headers: Record<string, string>; body: string; bytes?: Buffer },
  input: Item | undefined,
): Item[] {
  const full = p.options.fullResponse;
  const meta = {
    headers: res.headers,
    statusCode: res.status,
    statusMessage: STATUS_CODES[res.status] ?? '',
  };
  if (p.responseFormat === 'file') {
    return [
      fileItem(
        {
          statusCode: res.status,
          headers: res.headers,
          text: res.body,
          ...(res.bytes ? { bytes: res.bytes } : {}),
        },
        {
          fullResponse: full,
          neverError: true,
          responseFormat: 'file',
          outputPropertyName: p.dataPropertyName,
        },
        input,
      ),
    ];
  }
  if (p.responseFormat === 'string') {
    const json = full ? { [p.dataPropertyName]: res.body, ...meta } : { [p.dataPropertyName]: res.body };
    return [{ json: json as Record<string, Json> }];
  }
  let body: unknown = {};
  if (res.body.trim() !== '') {
    try {
      body = JSON.parse(res.body);
    } catch {
      throw new NodeOperationError('Response body is not valid JSON. Change "Response Format" to "String"');
    }
  }
  if (full) return [{ json: { body: body as Json, ...meta } }];
  if (p.options.splitIntoItems && Array.isArray(body))
    return body.map((entry) => ({ json: asObject(entry) }));
  return [{ json: asObject(body) }];
}

/** An item's JSON is an object: n8n's replaceNullValues makes null `{}`; another value is kept under `data`. */
const asObject = (v: unknown): Record<string, Json> =>
  v === null || v === undefined
    ? {}
    : typeof v === 'object' && !Array.isArray(v)
      ? (v as Record<string, Json>)
      : { data: v as Json };

function jsonOf(value: unknown, field: string): unknown {
  if (typeof value === 'object' && value !== null) return value;
  try {
    return JSON.parse(String(value));
  } catch {
    throw new NodeOperationError(
      `The data in "${field}" is no valid JSON. Set Body Content Type to "RAW/Custom" for XML or other types of payloads`,
    );
  }
}

const objectOf = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.entries(v).filter(([k]) => !UNSAFE_KEYS.has(k)))
    : {};

/** The generic credential the node's authentication names, read from its credential slot. */
async function credentialOf(
  ctx: NodeExecutionContext<HttpRequestLegacyParams>,
  p: HttpRequestLegacyParams,
): Promise<AppliedCredential | null> {
  const type = authTypeOf(p);
  if (type === null) return null;
  const ref: unknown = (ctx.node.credentials as Record<string, unknown> | undefined)?.[type];
  const id =
    typeof ref === 'string'
      ? ref
      : ref !== null && typeof ref === 'object' && typeof (ref as { id?: unknown }).id === 'string'
        ? (ref as { id: string }).id
        : undefined;
  if (id === undefined) throw new NodeOperationError(`Node does not have any credentials set for "${type}"`);
  return { type, data: await ctx.credential(id) };
}

function authTypeOf(p: HttpRequestLegacyParams): string | null {
  if (p.authentication === 'none') return null;
  if (p.authentication === 'predefinedCredentialType' && isPredefinedType(p.nodeCredentialType))
    return p.nodeCredentialType;
  const type = p.authentication === 'genericCredentialType' ? p.genericAuthType : V1_AUTH[p.authentication];
  if (!isGeneric(type))
    throw new NodeOperationError(`Authentication '${p.authentication}' is not supported here`);
  return type;
}

const isGeneric = (t: unknown): t is GenericAuthType =>
  typeof t === 'string' && (GENERIC_AUTH_TYPES as readonly string[]).includes(t);

/** What n8n's v1/v2 can do but this platform does not: a 400 at save naming each. */
function refusals(p: HttpRequestLegacyParams): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const refuse = (path: string, message: string) => problems.push({ path: `parameters.${path}`, message });
  if (p.authentication === 'predefinedCredentialType' && !isPredefinedType(p.nodeCredentialType))
    refuse('nodeCredentialType', predefinedRefusal(p.nodeCredentialType));
  else if (p.authentication === 'genericCredentialType' && !isGeneric(p.genericAuthType))
    refuse(
      'genericAuthType',
      `'${p.genericAuthType ?? ''}' is not supported here (supported: ${GENERIC_AUTH_TYPES.join(', ')})`,
    );
  else if (['digestAuth', 'oAuth1', 'oAuth2'].includes(p.authentication))
    refuse(
      'authentication',
      `'${p.authentication}' is not supported here (supported: basicAuth, headerAuth, queryAuth, or a generic credential type)`,
    );
  if (p.allowUnauthorizedCerts)
    refuse(
      'allowUnauthorizedCerts',
      'ignoring TLS certificate errors is not allowed: outbound calls always verify certificates',
    );
  if (p.options.proxy)
    refuse('options.proxy', 'proxies are not supported: outbound calls go through the platform guard');
  return problems;
}
