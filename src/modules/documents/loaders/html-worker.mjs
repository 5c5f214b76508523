// Reads one HTML page in a worker thread: Readability over linkedom costs ~1.2 s per MB of HTML, which on
// the server's thread would stall every other request. Plain JS: a worker runs its file directly, with no
// TypeScript loader (the build copies it to dist).
//
// HTML → one page of text. Readability picks the main content (no navigation, footers, ads) and turndown
// writes it as Markdown, which is "text with the headings kept": chunks then carry their section titles.
import { parentPort, workerData } from 'node:worker_threads';
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

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

/** @param {string} fragment */
function toMarkdown(fragment) {
  if (fragment.trim() === '') return '';
  return turndown
    .turndown(fragment)
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** @param {string} s */
const clean = (s) => s.replace(/\s+/g, ' ').trim();

/** Readability resolves relative links against the document URL; linkedom has none unless given a <base>. */
function setBaseUrl(document, url) {
  if (document.querySelector('base[href]') !== null || document.head === null) return;
  try {
    const base = document.createElement('base');
    base.setAttribute('href', new URL(url).toString());
    document.head.prepend(base);
  } catch {
    // Not an absolute URL: links stay relative, which only matters for the dropped link targets.
  }
}

/** @param {{html: string; url?: string}} input */
function extract({ html, url }) {
  // linkedom builds no <html> element for a fragment, and then has no body either: give it one.
  const { document } = parseHTML(
    /<html[\s>]/i.test(html) ? html : `<!doctype html><html><body>${html}</body></html>`,
  );
  for (const el of document.querySelectorAll(NON_TEXT)) el.remove();
  const pageTitle = clean(document.querySelector('title')?.textContent ?? '');
  // Readability rewrites the tree it reads; the fallback needs the body as it was.
  const bodyHtml = document.body?.innerHTML ?? '';
  let article = null;
  try {
    if (url !== undefined) setBaseUrl(document, url);
    article = new Readability(document).parse();
  } catch {
    article = null; // A page Readability cannot walk still has a body.
  }
  let text = article?.content ? toMarkdown(article.content) : '';
  if (text === '') text = toMarkdown(bodyHtml);
  const title = clean(article?.title ?? '') || pageTitle;
  return { title: title === '' ? null : title, text };
}

/**
 * n8n's HTTP Request tool "text" optimizer: Readability's `textContent` of the page (the main content as
 * plain text; nothing when Readability finds no article).
 * @param {{html: string}} input
 */
function readableText({ html }) {
  const { document } = parseHTML(
    /<html[\s>]/i.test(html) ? html : `<!doctype html><html><body>${html}</body></html>`,
  );
  let text = '';
  try {
    text = new Readability(document, { keepClasses: true }).parse()?.textContent ?? '';
  } catch {
    text = '';
  }
  return { title: null, text };
}

parentPort?.postMessage(workerData.mode === 'readableText' ? readableText(workerData) : extract(workerData));
