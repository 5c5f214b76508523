/**
 * PDF → pages of text, read by unpdf (PDF.js) in a worker thread bounded in memory and time. One worker
 * per call: simple, and a worker that ran out of memory or time is simply thrown away. Starting one costs
 * tens of milliseconds, small beside the parsing itself; a pool can come when uploads are frequent.
 */
import { AppError } from '../../../core/errors.js';
import type { LoadedDocument } from '../types.js';
import { runInWorker } from './worker-run.js';

export interface PdfOptions {
  /** The worker is terminated after this long, whatever it is doing. */
  timeoutMs: number;
  /** PDFs with more pages are refused before any text is extracted. */
  maxPages: number;
  /** Whose read it is (an account), for its turn when every parser worker is busy. */
  tenant?: string;
}

/** Heap limit of a PDF worker: ample for text extraction, small enough that a bomb only kills the worker. */
const WORKER_HEAP_MB = 256;
/** Most bytes the PDF's (non-image) streams may decode to: the heap limit does not cover those buffers. */
const MAX_DECODED_BYTES = 128 * 1024 * 1024;
const WORKER_URL = new URL('./pdf-worker.mjs', import.meta.url);
const PDF_MAGIC = '%PDF-';

/** What the worker posts back (see pdf-worker.mjs). */
type WorkerResult =
  | ({ ok: true; title: string | null; pages: string[] } & Partial<Omit<PdfDetails, 'pages'>>)
  | { ok: false; kind: 'unreadable'; message: string }
  | { ok: false; kind: 'too-many-pages'; pages: number }
  | { ok: false; kind: 'too-large-decoded' };

/** True when the bytes start like a PDF (PDF.js tolerates junk before the header; we do not). */
export function looksLikePdf(bytes: Uint8Array): boolean {
  if (bytes.length < PDF_MAGIC.length) return false;
  for (let i = 0; i < PDF_MAGIC.length; i++) if (bytes[i] !== PDF_MAGIC.charCodeAt(i)) return false;
  return true;
}

export async function pdfToDocument(bytes: Uint8Array, options: PdfOptions): Promise<LoadedDocument> {
  if (!looksLikePdf(bytes)) throw new AppError('UNPROCESSABLE', 'The file is not a PDF');
  const result = await runWorker(bytes, options);
  if (!result.ok) throw failure(result, options);
  return {
    title: result.title,
    mimeType: 'application/pdf',
    // Tidied in the worker: a large PDF's text is megabytes of regular-expression work.
    pages: result.pages.map((text, i) => ({ pageNumber: i + 1, text })),
  };
}

/** What n8n's PDF extraction reports of a file besides its text (Extract from File, Read PDF). */
export interface PdfDetails {
  numPages: number;
  info: unknown;
  metadata: unknown;
  /** PDF.js's version, as n8n reports it. */
  version: string;
  /** Text of the first `readPages` pages (all when unset). */
  pages: string[];
}

/**
 * A PDF's text per page with its info and metadata, in the same bounded worker; `readPages` limits
 * the pages read (n8n's `maxPages`), `password` opens an encrypted file. Failures are AppErrors with
 * the same messages as document loading.
 */
export async function readPdf(
  bytes: Uint8Array,
  options: PdfOptions & { password?: string; readPages?: number },
): Promise<PdfDetails> {
  if (!looksLikePdf(bytes)) throw new AppError('UNPROCESSABLE', 'The file is not a PDF');
  const result = await runWorker(bytes, options, {
    details: true,
    ...(options.password ? { password: options.password } : {}),
    ...(options.readPages !== undefined ? { readPages: options.readPages } : {}),
  });
  if (!result.ok) throw failure(result, options);
  return {
    numPages: result.numPages ?? result.pages.length,
    info: result.info ?? null,
    metadata: result.metadata ?? null,
    version: result.version ?? '',
    pages: result.pages,
  };
}

function failure(result: Exclude<WorkerResult, { ok: true }>, options: PdfOptions): AppError {
  if (result.kind === 'too-many-pages') {
    return new AppError('UNPROCESSABLE', `The PDF has more than ${options.maxPages} pages`, {
      pages: result.pages,
      maxPages: options.maxPages,
    });
  }
  if (result.kind === 'too-large-decoded') {
    return new AppError('UNPROCESSABLE', 'The PDF expands to more data than can be read safely', {
      maxDecodedBytes: MAX_DECODED_BYTES,
    });
  }
  // PDF.js's own message says what is broken; it names nothing of the server.
  return new AppError('UNPROCESSABLE', 'The PDF could not be read', { reason: result.message });
}

function runWorker(
  bytes: Uint8Array,
  options: PdfOptions,
  extra: { details?: boolean; password?: string; readPages?: number } = {},
): Promise<WorkerResult> {
  // A copy the worker owns: the caller's buffer may be a slice of a shared pool, and PDF.js detaches it.
  const copy = new Uint8Array(bytes);
  return runInWorker<WorkerResult>(
    WORKER_URL,
    { bytes: copy, maxPages: options.maxPages, maxDecodedBytes: MAX_DECODED_BYTES, ...extra },
    [copy.buffer],
    {
      timeoutMs: options.timeoutMs,
      heapMb: WORKER_HEAP_MB,
      what: 'PDF',
      ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
    },
  );
}
