/**
 * HTML → one page of text (main content as Markdown, headings kept), extracted in a worker thread bounded
 * in memory and time (see html-worker.mjs): a large or hostile page costs that thread, not the server.
 */
import { AppError } from '../../../core/errors.js';
import type { LoadedDocument } from '../types.js';
import { runInWorker } from './worker-run.js';

/** Larger pages are refused before parsing: a DOM costs many times its source in memory. */
export const MAX_HTML_BYTES = 10 * 1024 * 1024;
/** Heap of an HTML worker: a 10 MB page's DOM fits; more fails the page, not the server. */
const WORKER_HEAP_MB = 768;
const WORKER_URL = new URL('./html-worker.mjs', import.meta.url);
const DEFAULT_TIMEOUT_MS = 30_000;

export async function htmlToDocument(
  html: string,
  url?: string,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<LoadedDocument> {
  const bytes = Buffer.byteLength(html, 'utf8');
  if (bytes > MAX_HTML_BYTES) {
    throw new AppError('PAYLOAD_TOO_LARGE', `HTML is larger than ${MAX_HTML_BYTES} bytes`, {
      bytes,
      maxBytes: MAX_HTML_BYTES,
    });
  }
  const { title, text } = await runInWorker<{ title: string | null; text: string }>(
    WORKER_URL,
    url === undefined ? { html } : { html, url },
    [],
    { timeoutMs, heapMb: WORKER_HEAP_MB, what: 'HTML page' },
  );
  return { title, mimeType: 'text/html', pages: [{ pageNumber: 1, text }] };
}

/** Readability's plain `textContent` of a page (n8n's HTTP Request tool "text" optimizer), in the worker. */
export async function htmlReadableText(
  html: string,
  tenant?: string,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<string> {
  const bytes = Buffer.byteLength(html, 'utf8');
  if (bytes > MAX_HTML_BYTES)
    throw new AppError('PAYLOAD_TOO_LARGE', `HTML is larger than ${MAX_HTML_BYTES} bytes`, {
      bytes,
      maxBytes: MAX_HTML_BYTES,
    });
  const { text } = await runInWorker<{ text: string }>(WORKER_URL, { html, mode: 'readableText' }, [], {
    timeoutMs,
    heapMb: WORKER_HEAP_MB,
    what: 'HTML page',
    ...(tenant !== undefined ? { tenant } : {}),
  });
  return text;
}

const SELECT_WORKER_URL = new URL('./html-select-worker.mjs', import.meta.url);

/**
 * The elements `selector` picks from a page, each as its HTML or (`onlyContent`) its text without the
 * `omit` selectors, whitespace collapsed (n8n's HTTP Request tool "html" optimizer), in a worker.
 */
export async function htmlSelectTexts(
  html: string,
  pick: { selector: string; onlyContent: boolean; omit: string[] },
  tenant?: string,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<string[]> {
  const bytes = Buffer.byteLength(html, 'utf8');
  if (bytes > MAX_HTML_BYTES)
    throw new AppError('PAYLOAD_TOO_LARGE', `HTML is larger than ${MAX_HTML_BYTES} bytes`, {
      bytes,
      maxBytes: MAX_HTML_BYTES,
    });
  const out = await runInWorker<{ texts?: string[]; error?: string }>(
    SELECT_WORKER_URL,
    { html, ...pick },
    [],
    { timeoutMs, heapMb: WORKER_HEAP_MB, what: 'HTML page', ...(tenant !== undefined ? { tenant } : {}) },
  );
  if (out.error) throw new AppError('VALIDATION_ERROR', `'${pick.selector}' is not a CSS selector`);
  return out.texts ?? [];
}
