import { randomBytes } from 'node:crypto';
import { customAuth, multipleHeaders } from '../../../credentials/http-auth-data.js';
import { binaryBytes } from '../../../engine/binary.js';
import { credentialSecrets } from '../../../engine/credential-redaction.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { Item, OutboundRequest } from '../../../engine/types.js';
import { signOAuth2 } from './oauth2.js';
import { applyPredefined, isPredefinedType, predefinedSecrets } from './predefined/index.js';
import type { GenericAuthType, HttpRequestV4Params } from './schema.js';

/** A request as n8n's node prepares it (qs, headers and body kept structured for pagination merges). */
export interface PreparedRequest {
  method: string;
  url: string;
  qs: Record<string, unknown>;
  headers: Record<string, string>;
  body?: RequestBody;
  timeoutMs: number;
  /** Header names carrying a credential: dropped on a cross-origin redirect, hidden in `$request`. */
  credentialHeaders: string[];
  /** Query parameter names carrying a credential: hidden in `$request`. */
  credentialQuery?: string[];
  /** n8n's redirect option: 0 answers a redirect as it is; the platform follows at most 5. */
  maxRedirects?: number;
  arrayFormat: 'repeat' | 'brackets' | 'indices';
}

type RequestBody =
  | { kind: 'json'; value: unknown }
  | { kind: 'form'; value: Record<string, unknown> }
  | { kind: 'multipart'; fields: Array<[string, unknown]> }
  | { kind: 'raw'; text: string }
  | { kind: 'binary'; bytes: Buffer; mimeType: string };

/** A file in a multipart body (n8n's `formBinaryData` row): the bytes of an item's binary property. */
interface FilePart {
  file: { bytes: Buffer; mimeType: string; fileName: string };
}

const isFilePart = (value: unknown): value is FilePart =>
  value !== null && typeof value === 'object' && Buffer.isBuffer((value as Partial<FilePart>).file?.bytes);

export interface AppliedCredential {
  /** A generic auth type, or one of the predefined credential types served (predefined.ts). */
  type: GenericAuthType | (string & {});
  data: Record<string, string>;
  /** An OAuth2 credential (oauth2.ts): `data.accessToken` signs, renewed once on the expired status. */
  oauth2?: { tokenType: string; expiredStatus: number; renew(): Promise<string> };
}

/** n8n waits 5 minutes when no timeout option is set. */
const DEFAULT_TIMEOUT_MS = 300_000;
const BODY_CONVERTING_METHODS = ['PATCH', 'POST', 'PUT', 'GET'];
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Builds item `index`'s request from its resolved parameters, as n8n's node does. */
export function buildRequest(
  p: HttpRequestV4Params,
  version: number,
  credential: AppliedCredential | null,
  item?: Item,
): PreparedRequest {
  const url = typeof p.url === 'string' ? p.url.trim() : p.url;
  if (typeof url !== 'string') {
    throw new NodeOperationError(`URL parameter must be a string, got ${url === null ? 'null' : typeof url}`);
  }
  if (url === '') throw new NodeOperationError('URL parameter cannot be empty');
  if (!url.startsWith('http://') && !url.startsWith('https://')) {
    throw new NodeOperationError(`Invalid URL: ${url}. URL must start with "http" or "https".`);
  }
  const req: PreparedRequest = {
    method: p.method,
    url,
    qs: {},
    headers: {},
    timeoutMs: p.options.timeout || DEFAULT_TIMEOUT_MS,
    ...redirectsOf(p),
    credentialHeaders: [],
    // The array format option counts only with query parameters on; request's own default is indices.
    arrayFormat: (p.sendQuery && p.options.queryParameterArrays) || 'indices',
  };
  // Duplicate names: the last wins before 4.3, from 4.3 on they collect into an array.
  const addPair = (into: Record<string, unknown>, name: string, value: unknown) => {
    if (UNSAFE_KEYS.has(name)) return;
    const prev = into[name];
    if (version < 4.3 || prev === undefined) into[name] = value;
    else into[name] = Array.isArray(prev) ? [...prev, value] : [prev, value];
  };
  const keypairs = (rows: Array<{ name: string; value: unknown }> | undefined) => {
    const out: Record<string, unknown> = {};
    for (const row of rows ?? []) addPair(out, row.name, row.value);
    return out;
  };

  if (p.sendBody) req.body = buildBody(p, version, keypairs, item);
  if (p.sendQuery) {
    req.qs =
      p.specifyQuery === 'json'
        ? jsonObject(p.jsonQuery, 'JSON Query Parameters')
        : keypairs(p.queryParameters?.parameters);
  }
  if (p.sendHeaders) {
    const extra =
      p.specifyHeaders === 'json'
        ? jsonObject(p.jsonHeaders, 'JSON Headers')
        : keypairs(p.headerParameters?.parameters.filter((h) => h.name !== ''));
    for (const [name, value] of Object.entries(extra)) {
      req.headers[p.options.lowercaseHeaders ? name.toLowerCase() : name] = headerValue(value);
    }
  }
  if (p.sendBody && p.contentType === 'raw') req.headers['content-type'] = p.rawContentType;
  if (p.options.requestUncompressedResponse) req.headers['accept-encoding'] = 'identity';
  if (credential) applyCredential(req, credential);
  if (!Object.keys(req.headers).some((h) => h.toLowerCase() === 'accept')) {
    req.headers.accept = ACCEPT[p.options.response?.response.responseFormat ?? 'autodetect'];
  }
  return req;
}

const ACCEPT: Record<'json' | 'text' | 'autodetect' | 'file', string> = {
  json: 'application/json,text/*;q=0.99',
  text: 'application/json,text/html,application/xhtml+xml,application/xml,text/*;q=0.9, */*;q=0.1',
  autodetect:
    'application/json,text/html,application/xhtml+xml,application/xml,text/*;q=0.9, image/*;q=0.8, */*;q=0.7',
  file: 'application/json,text/html,application/xhtml+xml,application/xml,text/*;q=0.9, image/*;q=0.8, */*;q=0.7',
};

function buildBody(
  p: HttpRequestV4Params,
  version: number,
  keypairs: (rows: Array<{ name: string; value: unknown }> | undefined) => Record<string, unknown>,
  item: Item | undefined,
): RequestBody | undefined {
  const rows = p.bodyParameters?.parameters ?? [];
  let value: unknown;
  if (p.contentType === 'binaryData') {
    const { bytes, meta } = fileOf(item, p.inputDataFieldName);
    return { kind: 'binary', bytes, mimeType: meta.mimeType };
  }
  if (p.contentType === 'multipart-form-data') {
    return {
      kind: 'multipart',
      fields: rows.map((r): [string, unknown] => {
        if (r.parameterType !== 'formBinaryData') return [r.name, r.value];
        const { bytes, meta } = fileOf(item, r.inputDataFieldName);
        return [r.name, { file: { bytes, mimeType: meta.mimeType, fileName: meta.fileName ?? r.name } }];
      }),
    };
  }
  if (p.contentType === 'raw') {
    // n8n sends a raw body only with these methods.
    return BODY_CONVERTING_METHODS.includes(p.method) ? { kind: 'raw', text: textOf(p.body) } : undefined;
  }
  if (p.specifyBody === 'keypair') {
    value = p.contentType === 'json' && version >= 4 ? nestedPairs(rows) : keypairs(rows);
  } else if (p.specifyBody === 'json') {
    value =
      typeof p.jsonBody === 'object' && p.jsonBody !== null ? p.jsonBody : parseJson(p.jsonBody, 'JSON Body');
  } else {
    value = Object.fromEntries(new URLSearchParams(textOf(p.body)));
  }
  // n8n converts to a form only for these methods; otherwise the object goes out as JSON.
  if (p.contentType === 'form-urlencoded' && BODY_CONVERTING_METHODS.includes(p.method)) {
    return { kind: 'form', value: (value ?? {}) as Record<string, unknown> };
  }
  return { kind: 'json', value };
}

/** JSON keypair bodies from 4.0 on: names are paths (`a.b`, `a[0]`), as lodash's `set`. */
function nestedPairs(rows: Array<{ name: string; value: unknown }>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const row of rows) setPath(root, row.name, row.value);
  return root;
}

export function setPath(root: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.match(/[^.[\]]+/g) ?? [path];
  if (keys.some((k) => UNSAFE_KEYS.has(k))) return;
  let cur: Record<string, unknown> = root;
  keys.forEach((key, i) => {
    if (i === keys.length - 1) {
      cur[key] = value;
      return;
    }
    const next = cur[key];
    if (next === null || typeof next !== 'object') cur[key] = /^\d+$/.test(keys[i + 1] ?? '') ? [] : {};
    cur = cur[key] as Record<string, unknown>;
  });
}

export function applyCredential(req: PreparedRequest, { type, data, oauth2 }: AppliedCredential): void {
  const need = (field: string): string => {
    const v = data[field];
    if (typeof v !== 'string') throw new NodeOperationError(`The ${type} credential has no '${field}'`);
    return v;
  };
  const header = (name: string, value: string) => {
    req.headers[name] = value;
    req.credentialHeaders.push(name);
  };
  const query = (name: string, value: string) => {
    req.qs[name] = value;
    req.credentialQuery = [...(req.credentialQuery ?? []), name];
  };
  if (oauth2) {
    signOAuth2(req, need('accessToken'), oauth2.tokenType, header);
    return;
  }
  if (isPredefinedType(type)) {
    const has = (name: string) => Object.keys(req.headers).some((h) => h.toLowerCase() === name);
    applyPredefined(
      type,
      data,
      {
        header,
        plain: (name, value) => {
          req.headers[name] = value;
        },
        query,
        basic: (user, password) =>
          header('authorization', `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`),
        has,
      },
      need,
    );
    return;
  }
  switch (type) {
    case 'httpBasicAuth':
      header(
        'authorization',
        `Basic ${Buffer.from(`${need('user')}:${need('password')}`).toString('base64')}`,
      );
      return;
    case 'httpBearerAuth':
      header('authorization', `Bearer ${need('token')}`);
      return;
    case 'httpHeaderAuth':
      header(need('name'), need('value'));
      return;
    case 'httpQueryAuth':
      query(need('name'), need('value'));
      return;
    case 'httpMultipleHeadersAuth':
      for (const [name, value] of fromCredential(() => multipleHeaders(need('headers')))) header(name, value);
      return;
    case 'httpCustomAuth': {
      const custom = fromCredential(() => customAuth(data.json ?? ''));
      for (const [name, value] of custom.headers) header(name, value);
      Object.assign(req.qs, custom.qs);
      req.credentialQuery = [...(req.credentialQuery ?? []), ...Object.keys(custom.qs)];
      if (custom.body) {
        const base = req.body?.kind === 'json' || req.body?.kind === 'form' ? req.body.value : {};
        const merged = { ...(base as Record<string, unknown>), ...custom.body };
        req.body =
          req.body?.kind === 'form' ? { kind: 'form', value: merged } : { kind: 'json', value: merged };
      }
      return;
    }
  }
}

/** The secrets a credential's request may carry, for redacting what comes back (fields and basic pairs). */
export const secretsOf = (credential: AppliedCredential | null): string[] =>
  credential
    ? [...credentialSecrets(credential.data), ...predefinedSecrets(credential.type, credential.data)]
    : [];

/** A credential's structured field, read; what is wrong with it is the node's error. */
function fromCredential<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new NodeOperationError((error as Error).message);
  }
}

/** n8n checks its `json` parameters when the node reads them, with this message. */
function parseJson(value: unknown, field: string): unknown {
  try {
    return JSON.parse(textOf(value));
  } catch (err) {
    throw new NodeOperationError('JSON parameter needs to be valid JSON', {
      description: `The value in the "${field}" field is not valid JSON: ${(err as Error).message}`,
    });
  }
}

function jsonObject(value: unknown, field: string): Record<string, unknown> {
  const parsed = typeof value === 'object' && value !== null ? value : parseJson(value, field);
  return (parsed ?? {}) as Record<string, unknown>;
}

const textOf = (v: unknown): string =>
  typeof v === 'string'
    ? v
    : v === undefined || v === null
      ? ''
      : typeof v === 'object'
        ? JSON.stringify(v)
        : String(v);

const headerValue = (v: unknown): string => textOf(v);

/** The qs library's encoding: arrays by `format`, objects as `a[b]`, null as an empty value. */
function stringifyQuery(qs: Record<string, unknown>, format: PreparedRequest['arrayFormat']): string {
  const out: string[] = [];
  const add = (key: string, v: unknown) => {
    if (v === undefined) return;
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        add(format === 'repeat' ? key : format === 'brackets' ? `${key}[]` : `${key}[${i}]`, x);
      });
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) add(`${key}[${k}]`, x);
    } else {
      out.push(`${encodeURIComponent(key)}=${encodeURIComponent(v === null ? '' : String(v))}`);
    }
  };
  for (const [k, v] of Object.entries(qs)) add(k, v);
  return out.join('&');
}

/** The wire form of a prepared request for `deps.http`. */
/** n8n's `options.redirect`: not following answers the 3xx itself; a count bounds the hops. */
function redirectsOf(p: HttpRequestV4Params): { maxRedirects?: number } {
  const redirect = p.options.redirect?.redirect;
  if (!redirect) return {};
  if (redirect.followRedirects === false) return { maxRedirects: 0 };
  return { maxRedirects: Math.max(1, Math.floor(redirect.maxRedirects)) };
}

/** The bytes of an item's binary property, for a request body (n8n's `inputDataFieldName`, default `data`). */
function fileOf(item: Item | undefined, property: string | undefined) {
  try {
    return binaryBytes(item, property || 'data');
  } catch (error) {
    throw new NodeOperationError((error as Error).message);
  }
}

export function toOutbound(req: PreparedRequest): OutboundRequest {
  const query = stringifyQuery(req.qs, req.arrayFormat);
  const url = query === '' ? req.url : `${req.url}${req.url.includes('?') ? '&' : '?'}${query}`;
  const headers = { ...req.headers };
  const has = (name: string) => Object.keys(headers).some((h) => h.toLowerCase() === name);
  let body: string | Buffer | undefined;
  const b = req.body;
  if (b?.kind === 'json') {
    if (b.value !== undefined) {
      body = typeof b.value === 'string' ? b.value : JSON.stringify(b.value);
      if (!has('content-type')) headers['content-type'] = 'application/json';
    }
  } else if (b?.kind === 'form') {
    body = stringifyQuery(b.value, req.arrayFormat);
    if (!has('content-type')) headers['content-type'] = 'application/x-www-form-urlencoded';
  } else if (b?.kind === 'multipart') {
    const boundary = `--------------------------${randomBytes(12).toString('hex')}`;
    const parts: Buffer[] = [];
    for (const [name, value] of b.fields) {
      const safe = name.replace(/["\r\n]/g, '_');
      if (isFilePart(value)) {
        const fileName = value.file.fileName.replace(/["\r\n]/g, '_');
        parts.push(
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${safe}"; filename="${fileName}"\r\nContent-Type: ${value.file.mimeType.replace(/[\r\n]/g, '')}\r\n\r\n`,
          ),
          value.file.bytes,
          Buffer.from('\r\n'),
        );
      } else {
        parts.push(
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${safe}"\r\n\r\n${textOf(value)}\r\n`,
          ),
        );
      }
    }
    parts.push(Buffer.from(`--${boundary}--\r\n`));
    const bytes = Buffer.concat(parts);
    // Text-only forms stay strings (what the pagination and `$request` read).
    body = b.fields.some(([, v]) => isFilePart(v)) ? bytes : bytes.toString('utf8');
    headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
  } else if (b?.kind === 'raw') {
    body = b.text;
  } else if (b?.kind === 'binary') {
    body = b.bytes;
    if (!has('content-type')) headers['content-type'] = b.mimeType;
  }
  return {
    method: req.method,
    url,
    headers,
    timeoutMs: req.timeoutMs,
    credentialHeaders: req.credentialHeaders,
    ...(body !== undefined ? { body } : {}),
    ...(req.maxRedirects !== undefined ? { maxRedirects: req.maxRedirects } : {}),
  };
}
