import { createHash } from 'node:crypto';
import aws4 from 'aws4';
import { OutboundBlockedError, type OutboundResponse } from '../../../../../core/http/outbound.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { EngineDeps } from '../../../engine/types.js';

/** n8n's `aws` credential, as stored (text values). */
export type AwsCredential = Record<string, string | undefined>;

/** One request's time (the outbound client also bounds a response's size). */
const REQUEST_TIMEOUT_MS = 60_000;

export interface S3Target {
  credential: AwsCredential;
  http: EngineDeps['http'];
  deadlineAt?: number | undefined;
  /** A download's size limit (S3_MAX_DOWNLOAD_BYTES); default DEFAULT_S3_MAX_DOWNLOAD_BYTES. */
  maxDownloadBytes?: number | undefined;
}

/** 50 MB, as the FTP node's download bound. */
export const DEFAULT_S3_MAX_DOWNLOAD_BYTES = 50 * 1024 * 1024;

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
  /** A download: its size limit, and the body kept as bytes only. */
  download?: { maxBytes: number };
}

/**
 * One signed (SigV4, aws4) S3 request through the platform's outbound HTTP client, so the endpoint
 * passes the outbound-address guard; an S3 error document becomes the node's error.
 */
export function s3Request(t: S3Target, r: S3Request): Promise<OutboundResponse> {
  return signedRequest(t, {
    service: 's3',
    method: r.method,
    url: urlOf(t.credential, r.bucket, r.key ?? '', r.query ?? ''),
    ...(r.headers ? { headers: r.headers } : {}),
    ...(r.body !== undefined ? { body: r.body } : {}),
    ...(r.download ? { download: r.download } : {}),
  });
}

export interface SignedRequest {
  service: 's3' | 'sts';
  method: string;
  url: URL;
  headers?: Record<string, string>;
  body?: Buffer | string;
  download?: { maxBytes: number };
}

/** One SigV4-signed request to an AWS service (S3, STS) through the outbound client; >= 300 throws. */
export async function signedRequest(t: S3Target, r: SignedRequest): Promise<OutboundResponse> {
  const c = t.credential;
  if (!c.accessKeyId || !c.secretAccessKey)
    throw new NodeOperationError('The AWS credential needs an access key id and a secret access key');
  const url = r.url;
  const body = r.body ?? '';
  const signed = aws4.sign(
    {
      host: url.host,
      method: r.method,
      path: `${url.pathname}${url.search}`,
      service: r.service,
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
      ...(r.download ? { maxResponseBytes: r.download.maxBytes, responseType: 'bytes' as const } : {}),
    });
  } catch (err) {
    if (err instanceof OutboundBlockedError) {
      const cap = r.download && /larger than/.test(err.message);
      throw new NodeOperationError(
        cap ? `The file is larger than the S3 download limit of ${r.download?.maxBytes} bytes` : err.message,
        cap ? { description: 'S3_MAX_DOWNLOAD_BYTES sets the limit' } : undefined,
      );
    }
    throw new NodeOperationError(`The ${r.service.toUpperCase()} request failed: ${(err as Error).message}`);
  }
  if (res.status >= 300) throw await awsError(res);
  return res;
}

/** S3's `<Error>` or STS's `<ErrorResponse><Error>` as the node's error. */
async function awsError(res: OutboundResponse): Promise<NodeOperationError> {
  const text = res.body || (res.bytes?.subarray(0, 64 * 1024).toString('utf8') ?? '');
  const parsed = (await xmlOf(text).catch(() => null)) as {
    Error?: { Code?: string; Message?: string };
    ErrorResponse?: { Error?: { Code?: string; Message?: string } };
  } | null;
  const error = parsed?.Error ?? parsed?.ErrorResponse?.Error;
  const code = error?.Code ?? `HTTP ${res.status}`;
  const message = error?.Message ?? (text.slice(0, 200) || 'no message');
  return new NodeOperationError(`${code}: ${message}`, { description: `AWS answered ${res.status}` });
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
