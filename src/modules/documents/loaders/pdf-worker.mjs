// Reads one PDF in a worker thread, so that a hostile file (huge, slow or crashing the parser) costs this
// thread, which the caller bounds in memory and time and terminates, never the server's event loop.
// Plain JS: a worker runs its file directly, with no TypeScript loader (the build copies it to dist).
import { parentPort, workerData } from 'node:worker_threads';
import { extractText, getDocumentProxy, getMeta, getResolvedPDFJS } from 'unpdf';
import { decodedSize } from './pdf-expansion.mjs';

/** PDF.js gives runs of spaces and trailing blanks where a layout had columns; keep lines, drop the rest. */
const tidy = (text) =>
  text
    .replace(/[^\S\n]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();

/** A JSON-safe copy of PDF.js's info or metadata (strings, numbers, booleans, nested objects). */
const plain = (value, depth = 0) => {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (depth > 4 || typeof value !== 'object') return null;
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => plain(v, depth + 1));
  const out = {};
  for (const [k, v] of Object.entries(value).slice(0, 200)) out[k] = plain(v, depth + 1);
  return out;
};

/**
 * @param {{bytes: Uint8Array; maxPages: number; maxDecodedBytes: number; password?: string;
 *   readPages?: number; details?: boolean}} input
 */
async function read({ bytes, maxPages, maxDecodedBytes, password, readPages, details }) {
  if (decodedSize(bytes, maxDecodedBytes) === null) return { ok: false, kind: 'too-large-decoded' };
  let pdf;
  try {
    // No eval of font programs: a PDF's embedded code stays data.
    pdf = await getDocumentProxy(bytes, {
      isEvalSupported: false,
      useSystemFonts: false,
      ...(password ? { password } : {}),
    });
  } catch (err) {
    return { ok: false, kind: 'unreadable', message: String(err?.message ?? err) };
  }
  try {
    if (pdf.numPages > maxPages) {
      return { ok: false, kind: 'too-many-pages', pages: pdf.numPages };
    }
    const { text } = await extractText(pdf, { mergePages: false });
    let title = null;
    let meta = { info: null, metadata: null };
    try {
      const { info, metadata } = await getMeta(pdf);
      if (typeof info?.Title === 'string' && info.Title.trim() !== '') title = info.Title.trim();
      if (details) meta = { info: plain(info ?? null), metadata: plain(metadata ?? null) };
    } catch {
      // Broken metadata does not make the text unreadable.
    }
    const pages = (readPages === undefined ? text : text.slice(0, readPages)).map(tidy);
    if (!details) return { ok: true, title, pages };
    const { version } = await getResolvedPDFJS();
    return { ok: true, title, pages, numPages: pdf.numPages, ...meta, version };
  } catch (err) {
    return { ok: false, kind: 'unreadable', message: String(err?.message ?? err) };
  } finally {
    await pdf.destroy().catch(() => {});
  }
}

parentPort?.postMessage(await read(workerData));
