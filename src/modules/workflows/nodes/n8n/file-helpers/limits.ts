import { NodeOperationError } from '../../../engine/node-type.js';

/**
 * Bounds of the format nodes (HTML, XML, Markdown, files, compression): each parser runs on the
 * event loop, so an input is refused before parsing when it is larger than the parser can take in a
 * moment. The numbers are generous for workflow data and small beside the server's heap.
 */
export const FILE_LIMITS = {
  /** An HTML page to extract from (cheerio, html-to-text: roughly linear, ~1 s per MB on a busy core). */
  htmlBytes: 2 * 1024 * 1024,
  /**
   * HTML or Markdown to convert (node-html-markdown, showdown). node-html-markdown grows faster than
   * linearly: 256 KB took 5 s and 1 MB 208 s on a loaded 2-core machine, so it gets a small bound.
   */
  markdownBytes: 256 * 1024,
  /** An XML document to parse. */
  xmlBytes: 10 * 1024 * 1024,
  /** A spreadsheet file (XLSX, ODS) to read; its unzipped parts are bounded by `unzippedBytes`. */
  spreadsheetBytes: 10 * 1024 * 1024,
  /** A CSV or text file to read. */
  textBytes: 20 * 1024 * 1024,
  /** Rows read from one spreadsheet or CSV file. */
  rows: 100_000,
  /** What one archive, or one spreadsheet's zip parts, may decompress to in all. */
  unzippedBytes: 100 * 1024 * 1024,
  /** Entries in one archive. */
  archiveEntries: 1_000,
  /** A file written by a node (Convert to File, Compression). */
  outputBytes: 50 * 1024 * 1024,
  /** A PDF to read text from: parsed in a worker thread bounded in heap and time (documents module). */
  pdfBytes: 50 * 1024 * 1024,
  pdfPages: 2_000,
  pdfTimeoutMs: 30_000,
} as const;

const mb = (bytes: number) =>
  bytes < 1024 * 1024 ? `${Math.round(bytes / 1024)} KB` : `${Math.round(bytes / (1024 * 1024))} MB`;

/** Refuses an input over `limit` bytes with a message naming what and how much. */
export function assertSize(what: string, bytes: number, limit: number): void {
  if (bytes > limit)
    throw new NodeOperationError(`The ${what} is too large (${mb(bytes)}; at most ${mb(limit)} here)`, {
      description: `Inputs larger than ${mb(limit)} are refused so one file cannot stall the server.`,
    });
}
