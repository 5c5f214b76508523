/**
 * HTML → one page of text. Readability picks the main content (no navigation, footers, ads) and turndown
 * writes it as Markdown, which is "text with the headings kept": chunks then carry their section titles.
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { AppError } from '../../../core/errors.js';
import type { LoadedDocument } from '../types.js';

/** Larger pages are refused before parsing: a DOM costs many times its source in memory. */
export const MAX_HTML_BYTES = 10 * 1024 * 1024;

/** Elements that never hold readable text. */
const NON_TEXT = 'script, style, noscript, template, iframe, object, embed, svg, canvas';

const turndown = new TurndownService({
  headingStyle: 'atx',
  codeBlockStyle: 'fenced',
  bulletListMarker: '-',
  hr: '---',
});
// The text is for search and answers: a link's target and an image's address are noise there.
turndown.addRule('linkText', { filter: 'a', replacement: (content) => content });
turndown.addRule('noImages', { filter: 'img', replacement: () => '' });
turndown.remove(['script', 'style', 'noscript', 'template', 'iframe']);

export function htmlToDocument(html: string, url?: string): LoadedDocument {
  const bytes = Buffer.byteLength(html, 'utf8');
  if (bytes > MAX_HTML_BYTES) {
    throw new AppError('PAYLOAD_TOO_LARGE', `HTML is larger than ${MAX_HTML_BYTES} bytes`, {
      bytes,
      maxBytes: MAX_HTML_BYTES,
    });
  }
  // linkedom builds no <html> element for a fragment, and then has no body either: give it one.
  const { document } = parseHTML(
    /<html[\s>]/i.test(html) ? html : `<!doctype html><html><body>${html}</body></html>`,
  );
  for (const el of document.querySelectorAll(NON_TEXT)) el.remove();
  const pageTitle = clean(document.querySelector('title')?.textContent ?? '');
  // Readability rewrites the tree it reads; the fallback needs the body as it was.
  const bodyHtml = document.body?.innerHTML ?? '';

  let article: ReturnType<Readability<string>['parse']> = null;
  try {
    // linkedom's Document is not lib.dom's type, but it is the DOM Readability walks.
    const doc = document as unknown as ConstructorParameters<typeof Readability>[0];
    if (url !== undefined) setBaseUrl(document, url);
    article = new Readability(doc).parse();
  } catch {
    article = null; // A page Readability cannot walk still has a body.
  }

  let text = article?.content ? toMarkdown(article.content) : '';
  if (text === '') text = toMarkdown(bodyHtml);
  const title = clean(article?.title ?? '') || pageTitle;
  return { title: title === '' ? null : title, mimeType: 'text/html', pages: [{ pageNumber: 1, text }] };
}

function toMarkdown(fragment: string): string {
  if (fragment.trim() === '') return '';
  return turndown
    .turndown(fragment)
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const clean = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** Readability resolves relative links against the document URL; linkedom has none unless given a <base>. */
function setBaseUrl(document: ReturnType<typeof parseHTML>['document'], url: string): void {
  if (document.querySelector('base[href]') !== null || document.head === null) return;
  try {
    const base = document.createElement('base');
    base.setAttribute('href', new URL(url).toString());
    document.head.prepend(base);
  } catch {
    // Not an absolute URL: links stay relative, which only matters for the dropped link targets.
  }
}
