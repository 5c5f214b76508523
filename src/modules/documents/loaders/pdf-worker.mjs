// Reads one PDF in a worker thread, so that a hostile file (huge, slow or crashing the parser) costs this
// thread, which the caller bounds in memory and time and terminates, never the server's event loop.
// Plain JS: a worker runs its file directly, with no TypeScript loader (the build copies it to dist).
import { parentPort, workerData } from 'node:worker_threads';
import { extractText, getDocumentProxy, getMeta } from 'unpdf';
import { decodedSize } from './pdf-expansion.mjs';

/** PDF.js gives runs of spaces and trailing blanks where a layout had columns; keep lines, drop the rest. */
const tidy = (text) =>
  text
    .replace(/[^\S\n]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();

/** @param {{bytes: Uint8Array; maxPages: number; maxDecodedBytes: number}} input */
async function read({ bytes, maxPages, maxDecodedBytes }) {
  if (decodedSize(bytes, maxDecodedBytes) === null) return { ok: false, kind: 'too-large-decoded' };
  let pdf;
  try {
    // No eval of font programs: a PDF's embedded code stays data.
    pdf = await getDocumentProxy(bytes, { isEvalSupported: false, useSystemFonts: false });
  } catch (err) {
    return { ok: false, kind: 'unreadable', message: String(err?.message ?? err) };
  }
  try {
    if (pdf.numPages > maxPages) {
      return { ok: false, kind: 'too-many-pages', pages: pdf.numPages };
    }
    const { text } = await extractText(pdf, { mergePages: false });
    let title = null;
    try {
      const { info } = await getMeta(pdf);
      if (typeof info?.Title === 'string' && info.Title.trim() !== '') title = info.Title.trim();
    } catch {
      // Broken metadata does not make the text unreadable.
    }
    return { ok: true, title, pages: text.map(tidy) };
  } catch (err) {
    return { ok: false, kind: 'unreadable', message: String(err?.message ?? err) };
  } finally {
    await pdf.destroy().catch(() => {});
  }
}

parentPort?.postMessage(await read(workerData));
