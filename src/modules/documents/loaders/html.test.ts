import { describe, expect, it } from 'vitest';
import { AppError } from '../../../core/errors.js';
import { htmlToDocument, MAX_HTML_BYTES } from './html.js';

const paragraph = (words: string) => `<p>${`${words} `.repeat(30).trim()}</p>`;

const ARTICLE = `<!doctype html><html><head><title>Site | The page</title><style>p { color: red }</style>
<script>window.tracking = 'SECRET_SCRIPT';</script></head><body>
<nav><a href="/">Home</a> <a href="/about">About us</a></nav>
<article><h1>Growing tomatoes</h1>${paragraph('Tomatoes need sun and regular watering.')}
<h2>Pruning</h2>${paragraph('Remove the side shoots every week, see <a href="/guide">the guide</a>.')}
<script>console.log('INLINE_SCRIPT')</script><img src="/a.png" alt="a tomato"></article>
<footer>Copyright 2024 Example</footer></body></html>`;

describe('htmlToDocument', () => {
  it('keeps the main content with its headings as Markdown, without scripts, styles or link targets', async () => {
    const doc = await htmlToDocument(ARTICLE, 'https://example.com/tomatoes');
    expect(doc.mimeType).toBe('text/html');
    expect(doc.pages).toHaveLength(1);
    const page = doc.pages[0];
    expect(page?.pageNumber).toBe(1);
    const text = page?.text ?? '';
    expect(text).toMatch(/^#+ Growing tomatoes$/m);
    expect(text).toMatch(/^#+ Pruning$/m);
    expect(text).toContain('Tomatoes need sun and regular watering.');
    expect(text).toContain('see the guide.');
    for (const absent of [
      'About us',
      'Copyright',
      'SECRET_SCRIPT',
      'INLINE_SCRIPT',
      'color: red',
      '/guide',
      'a.png',
      '<p>',
    ]) {
      expect(text).not.toContain(absent);
    }
    expect(doc.title).toBe('Site | The page');
  });

  it('takes the title from <title> and falls back to the body text of a page with no article', async () => {
    const doc = await htmlToDocument(
      '<html><head><title> Short </title></head><body><div>Just a line.</div></body></html>',
    );
    expect(doc.title).toBe('Short');
    expect(doc.pages[0]?.text).toBe('Just a line.');
  });

  it('reads a fragment without <html> and gives no title when there is none', async () => {
    const doc = await htmlToDocument('<h3>Notes</h3><p>one <b>two</b></p>');
    expect(doc.title).toBeNull();
    expect(doc.pages[0]?.text).toBe('### Notes\n\none **two**');
  });

  it('yields empty text for a page of only scripts and styles', async () => {
    const doc = await htmlToDocument(
      '<html><head><style>a{}</style></head><body><script>x()</script></body></html>',
    );
    expect(doc.pages[0]?.text).toBe('');
  });

  it('refuses more than 10 MB of HTML before parsing it', async () => {
    const huge = `<p>${'x'.repeat(MAX_HTML_BYTES)}</p>`;
    let caught: unknown;
    try {
      await htmlToDocument(huge);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('reads in a worker bounded in time: a page over its time limit fails alone, the event loop stays free', async () => {
    const para = '<p>Some words of a paragraph, with <b>bold</b> and <a href="#">links</a>.</p>';
    const big = `<html><body><article>${para.repeat(40_000)}</article></body></html>`;
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    try {
      await expect(htmlToDocument(big, undefined, 100)).rejects.toMatchObject({
        code: 'UNPROCESSABLE',
        message: expect.stringMatching(/took longer than 100 ms/),
      });
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(5);
  });
});
