import type { Json } from '../../../engine/types.js';
import { assertSize, FILE_LIMITS } from './limits.js';

/** An HTML file's first table as rows (n8n reads an HTML file as a spreadsheet). */
export async function htmlRows(
  html: string,
  headerRow: boolean | undefined,
): Promise<Array<Record<string, Json>>> {
  assertSize('HTML file', Buffer.byteLength(html), FILE_LIMITS.htmlBytes);
  // cheerio loads when an HTML file is first read, not at every start.
  const { load } = await import('cheerio');
  const $ = load(html);
  const grid = $('table')
    .first()
    .find('tr')
    .toArray()
    .slice(0, FILE_LIMITS.rows + 1)
    .map((tr) =>
      $(tr)
        .find('th,td')
        .toArray()
        .map((td) => $(td).text()),
    );
  if (headerRow === false) return grid.map((row) => ({ row }));
  const [header = [], ...body] = grid;
  return body.map((r) =>
    Object.fromEntries(header.map((h, i) => [h, r[i] ?? ''] as const).filter(([, v]) => v !== '')),
  );
}
