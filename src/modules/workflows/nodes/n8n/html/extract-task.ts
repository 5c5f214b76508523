import type * as cheerio from 'cheerio';
import type { convert as Convert } from 'html-to-text';
import type { Json } from '../../../engine/types.js';

/**
 * The HTML node's extraction (and the legacy HTML Extract's), run on a CPU worker (extract.ts): cheerio's
 * selector engine can take exponential time (`div:has(div:has(div:has(p)))` over 200 nested divs: 4–5 s,
 * one more level: minutes), so the worker's deadline bounds it. No engine imports: a worker loads only this.
 */

/** One extraction of n8n's HTML node (and the legacy HTML Extract): a key and where to find its value. */
export interface ExtractionValue {
  key: string;
  cssSelector: string;
  returnValue?: 'attribute' | 'html' | 'text' | 'value';
  attribute?: string;
  skipSelectors?: string;
  returnArray?: boolean;
}

export interface ExtractOptions {
  trimValues?: boolean;
  cleanUpText?: boolean;
}

export interface ExtractInput {
  html: string;
  values: ExtractionValue[];
  options: ExtractOptions;
  version: number;
  legacyTrim: boolean;
}

/** One output item's JSON, or the selector cheerio could not parse (a NodeOperationError on the main thread). */
export type ExtractResult =
  | { ok: true; json: Record<string, Json> }
  | { ok: false; selector: string; description: string };

type Selection = ReturnType<cheerio.CheerioAPI>;

/**
 * n8n's `getValue`: text is cheerio's `.text()` up to v1.1, then html-to-text's rendering (headings
 * upper-cased, links with their URL, `skipSelectors` skipped); `trimValues` and `cleanUpText` as n8n
 * applies them. `legacyTrim`: HTML Extract and HTML v1 trim unless `trimValues` is false.
 */
function extractOne(
  convert: typeof Convert,
  $el: Selection,
  v: ExtractionValue,
  options: ExtractOptions,
  version: number,
  legacyTrim: boolean,
): string | undefined {
  let value: string | undefined;
  switch (v.returnValue ?? 'text') {
    case 'attribute':
      value = $el.attr(v.attribute ?? '');
      break;
    case 'html':
      value = $el.html() || undefined;
      break;
    case 'value': {
      const val = $el.val();
      value = Array.isArray(val) ? val.join(',') : val;
      break;
    }
    default:
      if (version <= 1.1) value = $el.text() || (legacyTrim ? '' : undefined);
      else {
        const skip = v.skipSelectors
          ? v.skipSelectors.split(',').map((s) => ({ selector: s.trim(), format: 'skip' }))
          : undefined;
        value = convert($el.html() || '', skip ? { selectors: skip } : undefined);
      }
  }
  if (value === undefined) return value;
  if (legacyTrim ? options.trimValues !== false : options.trimValues) value = value.trim();
  if (options.cleanUpText)
    value = value
      .replace(/^\s+|\s+$/g, '')
      .replace(/(\r\n|\n|\r)/gm, '')
      .replace(/\s+/g, ' ');
  return value;
}

/** Extracts every value from one HTML document. */
export async function extractHtml(input: ExtractInput): Promise<ExtractResult> {
  const { values, options, version, legacyTrim } = input;
  // cheerio and html-to-text load when an HTML node first extracts, not at every start.
  const [{ load }, { convert }] = await Promise.all([import('cheerio'), import('html-to-text')]);
  const $ = load(input.html);
  const json: Record<string, Json> = {};
  for (const v of values) {
    let $el: Selection;
    try {
      $el = $(v.cssSelector);
    } catch (error) {
      return { ok: false, selector: v.cssSelector, description: (error as Error).message };
    }
    if (v.returnArray) {
      const list: Json[] = [];
      $el.each((_, el) => {
        const one = extractOne(convert, $(el), v, options, version, legacyTrim);
        list.push(one === undefined ? null : one);
      });
      json[v.key] = list;
    } else {
      const one = extractOne(convert, $el, v, options, version, legacyTrim);
      if (one !== undefined) json[v.key] = one;
    }
  }
  return { ok: true, json };
}
