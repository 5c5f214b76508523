import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's body parser decodes gzip, deflate and br itself (webhooks, as n8n's). */
    decodesContentEncoding?: boolean;
  }
}

/** The body's codings other than identity, lowercased, and the header as sent; null when none. */
function codingsOf(request: FastifyRequest): { codings: string[]; header: string } | null {
  const header = request.headers['content-encoding'];
  if (header === undefined) return null;
  const codings = header
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  return codings.length === 0 ? null : { codings, header };
}

const unsupported = (encoding: string, accepted?: string) =>
  new AppError(
    'UNSUPPORTED_MEDIA_TYPE',
    accepted
      ? `Content-Encoding '${encoding.slice(0, 50)}' is not supported; send the body uncompressed or as ${accepted}`
      : `Content-Encoding '${encoding.slice(0, 50)}' is not supported; send the body uncompressed`,
    { contentEncoding: encoding.slice(0, 50) },
  );

/**
 * Every route with a body refuses a `Content-Encoding` other than identity (415) before any parser
 * reads it — JSON, multipart uploads, raw blobs alike — unless its body parser decodes one itself.
 * A compressed body read as it is would be a misleading 400 at best or stored garbage at worst, and
 * decoding it everywhere would put a decompression bomb's cost ahead of each body limit.
 */
export function registerContentEncodingRule(app: FastifyInstance): void {
  app.addHook('preParsing', async (request, _reply, payload) => {
    const { 'content-length': length, 'transfer-encoding': chunked } = request.headers;
    if ((length === undefined || length === '0') && chunked === undefined) return payload;
    const encoded = codingsOf(request);
    if (encoded && request.routeOptions.config?.decodesContentEncoding !== true)
      throw unsupported(encoded.header);
    return payload;
  });
}

const DECODERS = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
} as const;

/**
 * The body as its sender meant it: the payload itself, or decompressed from gzip, deflate or br (n8n's
 * webhooks inflate gzip and deflate). The caller bounds the decoded bytes and destroys the stream
 * past its limit, so a small bomb costs no more than its limit. Another coding is a 415.
 */
export function decodedPayload(
  request: FastifyRequest,
  payload: NodeJS.ReadableStream,
): NodeJS.ReadableStream {
  const encoded = codingsOf(request);
  if (!encoded) return payload;
  const coding = encoded.codings.length === 1 ? encoded.codings[0] : undefined;
  const decoder =
    coding !== undefined && Object.hasOwn(DECODERS, coding)
      ? DECODERS[coding as keyof typeof DECODERS]
      : null;
  if (!decoder) throw unsupported(encoded.header, 'gzip, deflate or br');
  const stream = decoder();
  payload.pipe(stream);
  return stream;
}

/** A decoder's own failure (corrupt data) as the 400 it is. */
export function undecodableBody(error: unknown): AppError | null {
  const code = (error as { code?: unknown })?.code;
  // zlib's codes start Z_ (Z_DATA_ERROR, Z_BUF_ERROR); Brotli's ERR__ERROR_ (ERR__ERROR_FORMAT_…).
  return typeof code === 'string' && (code.startsWith('Z_') || code.startsWith('ERR__ERROR_'))
    ? new AppError('VALIDATION_ERROR', 'The body could not be decompressed as its Content-Encoding says', {
        contentEncoding: 'invalid',
      })
    : null;
}
