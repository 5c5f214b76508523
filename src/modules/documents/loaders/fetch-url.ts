/**
 * GET a document through the guarded outbound client and decide what it is. The client enforces the
 * private-address guard, redirects and limits; this maps its failures to the API's errors.
 */
import { AppError, validationError } from '../../../core/errors.js';
import {
  OutboundBlockedError,
  type OutboundHttp,
  OutboundTimeoutError,
} from '../../../core/http/outbound.js';
import { looksLikePdf } from './pdf.js';

export type DocumentKind = 'pdf' | 'html' | 'markdown' | 'text';

export interface FetchedDocument {
  bytes: Buffer;
  contentType: string;
}

const ACCEPT =
  'text/html, application/xhtml+xml, application/pdf, text/markdown, text/plain;q=0.9, */*;q=0.5';
const USER_AGENT = 'api-platform-knowledge-loader/0.1 (+document import)';
/** outbound.ts reports an oversized response as blocked; it is a size problem, not a forbidden address. */
const TOO_LARGE_PREFIX = 'Response is larger than';

/** A parsed absolute http(s) URL, or a 400 naming the field. */
export function requireHttpUrl(raw: string, field: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw validationError(`${field} must be an absolute http(s) URL`, [
      { field, message: 'must be an absolute http(s) URL' },
    ]);
  }
  return url;
}

export async function fetchDocument(
  url: URL,
  deps: { fetch: OutboundHttp; maxBytes: number; timeoutMs: number },
): Promise<FetchedDocument> {
  let res: Awaited<ReturnType<OutboundHttp>>;
  try {
    res = await deps.fetch({
      method: 'GET',
      url: url.toString(),
      headers: { accept: ACCEPT, 'user-agent': USER_AGENT },
      timeoutMs: deps.timeoutMs,
    });
  } catch (err) {
    throw fetchError(err, deps);
  }
  if (res.status < 200 || res.status > 299) {
    throw new AppError('UPSTREAM_ERROR', `The URL answered with status ${res.status}`, {
      status: res.status,
    });
  }
  const bytes = res.bytes ?? Buffer.from(res.body, 'utf8');
  const declared = Number(res.headers['content-length'] ?? Number.NaN);
  if (bytes.length > deps.maxBytes || declared > deps.maxBytes) throw tooLarge(deps.maxBytes);
  // A body shorter than announced was cut off on the way: indexing half a document would be silent loss.
  if (Number.isInteger(declared) && bytes.length < declared) {
    throw new AppError('UPSTREAM_ERROR', 'The URL sent a truncated document', {
      expectedBytes: declared,
      receivedBytes: bytes.length,
    });
  }
  return { bytes, contentType: res.headers['content-type'] ?? '' };
}

function fetchError(err: unknown, deps: { maxBytes: number; timeoutMs: number }): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof OutboundTimeoutError) {
    return new AppError('GATEWAY_TIMEOUT', `Fetching the URL took longer than ${deps.timeoutMs} ms`, {
      timeoutMs: deps.timeoutMs,
    });
  }
  if (err instanceof OutboundBlockedError) {
    if (err.message.startsWith(TOO_LARGE_PREFIX)) return tooLarge(deps.maxBytes);
    // The guard's message names the host and why, never what it resolved to.
    return new AppError('FORBIDDEN', `The URL is not allowed: ${err.message}`);
  }
  // Socket errors carry addresses and paths; the code alone says enough.
  const code = (err as { code?: unknown } | null)?.code;
  return new AppError('UPSTREAM_ERROR', 'Fetching the URL failed', {
    reason: typeof code === 'string' ? code : 'network error',
  });
}

export const tooLarge = (maxBytes: number): AppError =>
  new AppError('PAYLOAD_TOO_LARGE', `The document is larger than ${maxBytes} bytes`, { maxBytes });

/** Content-Type first, then the bytes (PDF magic, an HTML start), then the URL's extension. */
export function sniffKind(doc: FetchedDocument, url: URL): DocumentKind {
  const mime = mediaType(doc.contentType);
  if (mime === 'application/pdf' || mime === 'application/x-pdf') return 'pdf';
  if (mime === 'text/html' || mime === 'application/xhtml+xml') return 'html';
  if (mime === 'text/markdown' || mime === 'text/x-markdown') return 'markdown';
  if (looksLikePdf(doc.bytes)) return 'pdf';
  const head = doc.bytes.subarray(0, 1024);
  const start = head.toString('latin1').replace(/^\uFEFF|^\xEF\xBB\xBF/, '');
  if (/^\s*(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html)[\s>]/i.test(start)) return 'html';
  if (head.includes(0)) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'The URL does not hold a text, HTML or PDF document', {
      contentType: mime === '' ? null : mime,
    });
  }
  return /\.(?:md|markdown)$/i.test(url.pathname) ? 'markdown' : 'text';
}

/** The body as text, in the charset the header (or, for HTML, a <meta>) declares; UTF-8 otherwise. */
export function decodeText(doc: FetchedDocument, kind: DocumentKind): string {
  let charset = /;\s*charset\s*=\s*"?([\w.:-]+)/i.exec(doc.contentType)?.[1];
  if (charset === undefined && kind === 'html') {
    charset = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(
      doc.bytes.subarray(0, 4096).toString('latin1'),
    )?.[1];
  }
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(doc.bytes);
  } catch {
    return new TextDecoder('utf-8').decode(doc.bytes); // an unknown label: UTF-8 is the best guess
  }
}

const mediaType = (contentType: string): string => (contentType.split(';')[0] ?? '').trim().toLowerCase();
