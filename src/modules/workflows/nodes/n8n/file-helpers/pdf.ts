import { NodeOperationError } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import { assertSize, FILE_LIMITS } from './limits.js';

export interface PdfReadOptions {
  password?: string;
  /** n8n's `maxPages`: unset reads every page, 0 none. */
  maxPages?: number;
  /** n8n's `joinPages` (default true): one text with pages apart by a blank line, else one per page. */
  joinPages?: boolean;
}

/**
 * n8n's PDF extraction (Extract from File `pdf`, the legacy Read PDF): `{numpages, numrender, info,
 * metadata, text, version}`, read by the documents module's PDF worker (a thread bounded in heap and
 * time, no font programs run). Loaded on first use: the documents module is not needed to start.
 */
export async function extractPdf(bytes: Buffer, o: PdfReadOptions): Promise<Record<string, Json>> {
  assertSize('PDF file', bytes.length, FILE_LIMITS.pdfBytes);
  const { readPdf } = await import('../../../../documents/index.js');
  const maxPages = o.maxPages === undefined ? undefined : Math.max(0, Math.floor(o.maxPages));
  let read: Awaited<ReturnType<typeof readPdf>>;
  try {
    read = await readPdf(bytes, {
      timeoutMs: FILE_LIMITS.pdfTimeoutMs,
      maxPages: FILE_LIMITS.pdfPages,
      ...(o.password ? { password: o.password } : {}),
      ...(maxPages !== undefined ? { readPages: maxPages } : {}),
    });
  } catch (error) {
    const details = (error as { details?: { reason?: unknown } }).details;
    const reason = typeof details?.reason === 'string' ? details.reason : undefined;
    throw new NodeOperationError((error as Error).message, reason ? { description: reason } : {});
  }
  return {
    numpages: read.numPages,
    numrender: read.numPages,
    info: read.info as Json,
    metadata: read.metadata as Json,
    text: o.joinPages === false ? read.pages : read.pages.join('\n\n'),
    version: read.version,
  };
}
