import { describe, expect, it } from 'vitest';
import { AppError } from '../../../core/errors.js';
import { pdfToDocument } from './pdf.js';
import { buildFlateBombPdf, buildPdf } from './pdf-fixture.js';

const OPTIONS = { timeoutMs: 15_000, maxPages: 10 };

async function failure(run: () => Promise<unknown>): Promise<AppError> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected the call to fail');
}

describe('pdfToDocument', () => {
  it('extracts the text of each page with its page number, and the title from the metadata', async () => {
    const doc = await pdfToDocument(
      buildPdf(['Hello from page one', 'Page two (with parentheses)'], 'Field Guide'),
      OPTIONS,
    );
    expect(doc).toEqual({
      title: 'Field Guide',
      mimeType: 'application/pdf',
      pages: [
        { pageNumber: 1, text: 'Hello from page one' },
        { pageNumber: 2, text: 'Page two (with parentheses)' },
      ],
    });
  });

  it('has no title when the metadata has none', async () => {
    const doc = await pdfToDocument(buildPdf(['only page']), OPTIONS);
    expect(doc.title).toBeNull();
    expect(doc.pages).toEqual([{ pageNumber: 1, text: 'only page' }]);
  });

  it('refuses bytes that do not start with %PDF- before parsing', async () => {
    const err = await failure(() => pdfToDocument(Buffer.from('<html>not a pdf</html>'), OPTIONS));
    expect(err.code).toBe('UNPROCESSABLE');
    expect(err.message).toMatch(/not a PDF/);
  });

  it('fails a garbage PDF with 422, and the process carries on', async () => {
    const err = await failure(() =>
      pdfToDocument(Buffer.from('%PDF-1.7\n\x00\x01garbage without objects'), OPTIONS),
    );
    expect(err.code).toBe('UNPROCESSABLE');
    expect(err.status).toBe(422);
    // The same process still reads a good file afterwards.
    const doc = await pdfToDocument(buildPdf(['still fine']), OPTIONS);
    expect(doc.pages[0]?.text).toBe('still fine');
  });

  it('refuses a PDF with more pages than allowed', async () => {
    const err = await failure(() => pdfToDocument(buildPdf(['a', 'b', 'c']), { ...OPTIONS, maxPages: 2 }));
    expect(err.code).toBe('UNPROCESSABLE');
    expect(err.details).toEqual({ pages: 3, maxPages: 2 });
  });

  it('terminates the worker and fails the request when it runs past the time limit', async () => {
    const started = Date.now();
    const err = await failure(() => pdfToDocument(buildPdf(['slow?']), { timeoutMs: 1, maxPages: 10 }));
    expect(err.code).toBe('UNPROCESSABLE');
    expect(err.message).toMatch(/took longer than 1 ms/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('refuses a deflate bomb before PDF.js decodes it, and reads a large honest stream', async () => {
    const bomb = buildFlateBombPdf(300 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const started = Date.now();
    const err = await failure(() => pdfToDocument(bomb, OPTIONS));
    expect(err.code).toBe('UNPROCESSABLE');
    expect(err.message).toMatch(/expands/);
    expect(Date.now() - started).toBeLessThan(5_000);
    const honest = await pdfToDocument(buildFlateBombPdf(2 * 1024 * 1024), OPTIONS);
    expect(honest.pages[0]?.text).toBe('boom');
  });

  it('leaves the caller its bytes (the worker reads a copy)', async () => {
    const bytes = buildPdf(['mine']);
    const before = Buffer.from(bytes);
    await pdfToDocument(bytes, OPTIONS);
    expect(bytes.byteLength).toBe(before.byteLength);
    expect(bytes.equals(before)).toBe(true);
  });
});
