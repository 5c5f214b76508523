import { createHash } from 'node:crypto';
import aws4 from 'aws4';
import { OutboundBlockedError, type OutboundResponse } from '../../../../../core/http/outbound.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { EngineDeps } from '../../../engine/types.js';

/** n8n's `aws` credential, as stored (text values). */
export type AwsCredential = Record<string, string | undefined>;

/** One S3 request's time (the outbound client also bounds a response's size). */
const REQUEST_TIMEOUT_MS = 60_000;

export interface S3Target {
  credential: AwsCredential;
  http: EngineDeps['http'];
  deadlineAt?: number | undefined;
}

/** RFC 3986 encoding of a key, keeping its slashes (S3's canonical path). */
export const encodeKey = (key: string) =>
  key
    .split('/')
    .map((s) =>
      encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
    )
    .join('/');

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function bucketName(value: unknown): string {
  const name = String(value ?? '').trim();
  if (!BUCKET.test(name))
    throw new NodeOperationError(`'${name.slice(0, 80)}' is not a valid S3 bucket name`);
  return name;
}

export function objectKey(value: unknown, what = 'File Key'): string {
  const key = String(value ?? '').replace(/^\/+/, '');
  if (key === '') throw new NodeOperationError(`The parameter '${what}' is empty`);
  if (Buffer.byteLength(key) > 1_024) throw new NodeOperationError(`The ${what} is longer than 1,024 bytes`);
  return key;
}

/**
 * Where a request goes: a custom `s3Endpoint` takes the bucket in the path (path style, as MinIO and
 * other S3-compatible stores want); AWS itself the regional virtual-hosted name.
 */
function urlOf(c: AwsCredential, bucket: string | null, key: string, query: string): URL {
  const region = c.region || 'us-east-1';
  const custom = (c.customEndpoints === 'true' || c.customEndpoints === '1') && c.s3Endpoint;
  const q = query ? `?${query}` : '';
  if (custom) {
    let base: URL;
    try {
      base = new URL(String(c.s3Endpoint));
    } catch {
      throw new NodeOperationError(`The credential's S3 endpoint '${c.s3Endpoint}' is not a URL`);
    }
    const prefix = base.pathname.replace(/\/+$/, '');
    const at = bucket ? `/${bucket}${key ? `/${encodeKey(key)}` : ''}` : '/';
    return new URL(`${base.protocol}//${base.host}${prefix}${at}${q}`);
  }
  const host = bucket ? `${bucket}.s3.${region}.amazonaws.com` : `s3.${region}.amazonaws.com`;
  return new URL(`https://${host}/${encodeKey(key)}${q}`);
}

export interface S3Request {
  method: string;
  bucket: string | null;
  key?: string;
  query?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

/**
 * One signed (SigV4, aws4) request through the platform's outbound HTTP client, so the endpoint
 * passes the outbound-address guard; an S3 error document becomes the node's error.
 */
export async function s3Request(t: S3Target, r: S3Request): Promise<OutboundResponse> {
  const c = t.credential;
  if (!c.accessKeyId || !c.secretAccessKey)
    throw new NodeOperationError('The AWS credential needs an access key id and a secret access key');
  const url = urlOf(c, r.bucket, r.key ?? '', r.query ?? '');
  const body = r.body ?? '';
  const signed = aws4.sign(
    {
      host: url.host,
      method: r.method,
      path: `${url.pathname}${url.search}`,
      service: 's3',
      region: c.region || 'us-east-1',
      headers: {
        ...r.headers,
        'X-Amz-Content-Sha256': createHash('sha256').update(body).digest('hex'),
      },
      body,
      doNotEncodePath: true,
    },
    {
      accessKeyId: c.accessKeyId,
      secretAccessKey: c.secretAccessKey,
      ...(c.temporaryCredentials === 'true' && c.sessionToken ? { sessionToken: c.sessionToken } : {}),
    },
  );
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(signed.headers ?? {}))
    if (v !== undefined && k.toLowerCase() !== 'host') headers[k] = String(v);
  const left = t.deadlineAt !== undefined ? t.deadlineAt - Date.now() : REQUEST_TIMEOUT_MS;
  if (left <= 0) throw new NodeOperationError('The execution has no time left for an S3 request');
  let res: OutboundResponse;
  try {
    res = await t.http({
      method: r.method,
      url: url.toString(),
      headers,
      ...(r.body !== undefined ? { body: r.body } : {}),
      timeoutMs: Math.min(REQUEST_TIMEOUT_MS, left),
      maxRedirects: 0,
    });
  } catch (err) {
    if (err instanceof OutboundBlockedError) throw new NodeOperationError(err.message);
    throw new NodeOperationError(`The S3 request failed: ${(err as Error).message}`);
  }
  if (res.status >= 300) throw await s3Error(res);
  return res;
}

async function s3Error(res: OutboundResponse): Promise<NodeOperationError> {
  const parsed = (await xmlOf(res.body).catch(() => null)) as {
    Error?: { Code?: string; Message?: string };
  } | null;
  const code = parsed?.Error?.Code ?? `HTTP ${res.status}`;
  const message = parsed?.Error?.Message ?? (res.body.slice(0, 200) || 'no message');
  return new NodeOperationError(`${code}: ${message}`, { description: `S3 answered ${res.status}` });
}

/** S3's XML as n8n reads it (xml2js, single elements not wrapped in arrays). */
export async function xmlOf(body: string): Promise<Record<string, unknown>> {
  if (body.trim() === '') return {};
  const { parseStringPromise } = await import('xml2js');
  return (await parseStringPromise(body, { explicitArray: false, ignoreAttrs: true })) as Record<
    string,
    unknown
  >;
}

/** An element that may be absent, one object or a list, as a list. */
export const listOf = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
