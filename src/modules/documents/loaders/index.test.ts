import { describe, expect, it } from 'vitest';
import { AppError } from '../../../core/errors.js';
import { createOutboundHttp } from '../../../core/http/outbound.js';
import { type LoaderDeps, type LoadInput, loadDocument } from './index.js';
import { buildPdf } from './pdf-fixture.js';

const deps = (over: Partial<LoaderDeps> = {}): LoaderDeps => ({
  fetch: createOutboundHttp({ allowHosts: [], timeoutMs: 2_000 }),
  maxBytes: 1024 * 1024,
  timeoutMs: 2_000,
  pdf: { timeoutMs: 15_000, maxPages: 20 },
  ...over,
});

async function failure(input: LoadInput, d: LoaderDeps = deps()): Promise<AppError> {
  try {
    await loadDocument(input, d);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected loadDocument to fail');
}

describe('loadDocument: inline sources', () => {
  it('loads text as one page titled by its first line', async () => {
    const doc = await loadDocument(
      { source: 'text', content: '\r\n  Opening hours\r\nMonday to Friday.\r\n' },
      deps(),
    );
    expect(doc).toEqual({
      title: 'Opening hours',
      mimeType: 'text/plain',
      pages: [{ pageNumber: 1, text: 'Opening hours\nMonday to Friday.' }],
    });
  });

  it('titles markdown by its first heading, and a given title wins', async () => {
    const content = 'Intro line\n\n## Returns policy ##\n\nThirty days.';
    const doc = await loadDocument({ source: 'markdown', content }, deps());
    expect(doc.title).toBe('Returns policy');
    expect(doc.mimeType).toBe('text/markdown');
    expect(doc.pages[0]?.text).toBe(content);
    const titled = await loadDocument({ source: 'markdown', content, title: '  Mine ' }, deps());
    expect(titled.title).toBe('Mine');
  });

  it('cuts a long first line to at most 120 characters', async () => {
    const line = 'word '.repeat(60).trim();
    const doc = await loadDocument({ source: 'text', content: line }, deps());
    expect([...(doc.title ?? '')].length).toBeLessThanOrEqual(120);
    expect(doc.title).toMatch(/^word word .*…$/);
  });

  it('loads html through the HTML loader', async () => {
    const doc = await loadDocument(
      {
        source: 'html',
        content: '<html><head><title>T</title></head><body><h2>Head</h2><p>Body text.</p></body></html>',
      },
      deps(),
    );
    expect(doc.mimeType).toBe('text/html');
    expect(doc.title).toBe('T');
    expect(doc.pages[0]?.text).toContain('Body text.');
  });

  it('loads a base64 PDF (wrapped lines and a data: prefix allowed)', async () => {
    const b64 = buildPdf(['First page', 'Second page'], 'Manual').toString('base64');
    const wrapped = `data:application/pdf;base64,${b64.replace(/(.{76})/g, '$1\r\n')}`;
    const doc = await loadDocument({ source: 'pdf', content: wrapped }, deps());
    expect(doc.title).toBe('Manual');
    expect(doc.pages.map((p) => [p.pageNumber, p.text])).toEqual([
      [1, 'First page'],
      [2, 'Second page'],
    ]);
  });

  it('refuses bad base64, base64 that is not a PDF, and a garbage PDF with 422', async () => {
    for (const content of ['not base64!', 'QUJD=QUJD', 'QUJ']) {
      const err = await failure({ source: 'pdf', content });
      expect(err.code).toBe('UNPROCESSABLE');
      expect(err.message).toMatch(/base64/);
    }
    const notPdf = await failure({ source: 'pdf', content: Buffer.from('hello world').toString('base64') });
    expect(notPdf.code).toBe('UNPROCESSABLE');
    expect(notPdf.message).toMatch(/not a PDF/);
    const garbage = await failure({
      source: 'pdf',
      content: Buffer.from('%PDF-1.4 rubbish').toString('base64'),
    });
    expect(garbage.status).toBe(422);
  });

  it('names the missing field with a 400', async () => {
    const cases: Array<[LoadInput, string]> = [
      [{ source: 'text' }, 'content'],
      [{ source: 'markdown', content: '   ' }, 'content'],
      [{ source: 'html' }, 'content'],
      [{ source: 'pdf' }, 'url'],
      [{ source: 'url' }, 'url'],
      [{ source: 'workspace' }, 'content'],
    ];
    for (const [input, field] of cases) {
      const err = await failure(input);
      expect(err.code, input.source).toBe('VALIDATION_ERROR');
      expect(err.status).toBe(400);
      expect(err.details.fields).toEqual([expect.objectContaining({ field })]);
    }
    const badUrl = await failure({ source: 'url', url: 'ftp://example.com/a' });
    expect(badUrl.code).toBe('VALIDATION_ERROR');
  });

  it('refuses a document with no text', async () => {
    const err = await failure({ source: 'html', content: '<html><body><script>x()</script></body></html>' });
    expect(err.code).toBe('UNPROCESSABLE');
    expect(err.message).toBe('the document has no text');
    const blankPdf = await failure({ source: 'pdf', content: buildPdf(['   ']).toString('base64') });
    expect(blankPdf.message).toBe('the document has no text');
  });

  it('refuses content over maxBytes (counted in UTF-8 bytes, decoded bytes for base64)', async () => {
    const small = deps({ maxBytes: 10 });
    expect((await failure({ source: 'text', content: 'é'.repeat(6) }, small)).code).toBe('PAYLOAD_TOO_LARGE');
    expect((await failure({ source: 'html', content: '<p>0123456789</p>' }, small)).code).toBe(
      'PAYLOAD_TOO_LARGE',
    );
    const pdf = buildPdf(['x']).toString('base64');
    expect((await failure({ source: 'pdf', content: pdf }, small)).code).toBe('PAYLOAD_TOO_LARGE');
    const ok = await loadDocument({ source: 'text', content: 'é'.repeat(5) }, small);
    expect(ok.pages[0]?.text).toBe('ééééé');
  });
});

describe('loadDocument: workspace', () => {
  it('reads the page named by content (or url) as markdown', async () => {
    const asked: string[] = [];
    const workspace = async (pageId: string) => {
      asked.push(pageId);
      return { title: 'Team handbook', markdown: '# Handbook\n\nBe kind.' };
    };
    const doc = await loadDocument({ source: 'workspace', content: ' page-123 ' }, deps({ workspace }));
    expect(doc).toEqual({
      title: 'Team handbook',
      mimeType: 'text/markdown',
      pages: [{ pageNumber: 1, text: '# Handbook\n\nBe kind.' }],
    });
    await loadDocument({ source: 'workspace', url: 'page-456' }, deps({ workspace }));
    expect(asked).toEqual(['page-123', 'page-456']);
  });

  it('falls back to the first heading when the page has no title', async () => {
    const workspace = async () => ({ title: '', markdown: '# Handbook\n\nBe kind.' });
    const doc = await loadDocument({ source: 'workspace', content: 'p' }, deps({ workspace }));
    expect(doc.title).toBe('Handbook');
  });

  it('fails with 422 when there is no workspace credential', async () => {
    const err = await failure({ source: 'workspace', content: 'page-123' });
    expect(err.code).toBe('UNPROCESSABLE');
    expect(err.message).toMatch(/no workspace credential/);
  });

  it('passes the workspace reader’s own errors through', async () => {
    const workspace = async (): Promise<never> => {
      throw new AppError('NOT_FOUND', 'page not found');
    };
    const err = await failure({ source: 'workspace', content: 'gone' }, deps({ workspace }));
    expect(err.code).toBe('NOT_FOUND');
  });
});
