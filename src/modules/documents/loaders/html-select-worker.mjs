// The elements a CSS selector picks from a page, each as its HTML or (onlyContent) its text — n8n's HTTP
// Request tool "html" optimizer — in a worker thread: cheerio's selector engine can take exponential time
// and a large page's tree many times its size, so the worker's deadline and heap bound both.
import { parentPort, workerData } from 'node:worker_threads';
import { load } from 'cheerio';
import { convert } from 'html-to-text';

/** @param {{html: string; selector: string; onlyContent: boolean; omit: string[]}} input */
function select({ html, selector, onlyContent, omit }) {
  const $ = load(html);
  let picked;
  try {
    picked = $(selector);
  } catch {
    return { error: 'invalid selector' };
  }
  const options =
    omit.length > 0 ? { selectors: omit.map((s) => ({ selector: s, format: 'skip' })) } : undefined;
  const texts = [];
  picked.each((_, el) => {
    let value = $(el).html() || '';
    if (onlyContent) value = convert(value, options);
    // n8n's clean-up, step for step.
    texts.push(
      value
        .trim()
        .replace(/^\s+|\s+$/g, '')
        .replace(/(\r\n|\n|\r)/gm, '')
        .replace(/\s+/g, ' '),
    );
  });
  return { texts };
}

parentPort?.postMessage(select(workerData));
