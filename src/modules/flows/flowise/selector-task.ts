import { load } from 'cheerio';

/**
 * The elements a CSS selector picks from a page, as HTML — run on a CPU worker: cheerio's selector
 * engine can take exponential time (`div:has(div:has(div:has(p)))`), so the worker's deadline bounds it.
 * A selector cheerio cannot parse throws `invalid selector`.
 */
export function selectHtml(input: { html: string; selector: string }): string {
  const $ = load(input.html);
  let picked: ReturnType<typeof $>;
  try {
    picked = $(input.selector);
  } catch {
    throw new Error('invalid selector');
  }
  return picked
    .toArray()
    .map((el) => $.html(el))
    .join('\n');
}
