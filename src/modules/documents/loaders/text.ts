/** Plain text and Markdown → one page, with a title guessed from the text when none is given. */
import type { LoadedDocument } from '../types.js';

const TITLE_MAX = 120;
const HEADING = /^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$/m;

export function textDocument(text: string, mimeType: 'text/plain' | 'text/markdown'): LoadedDocument {
  // One line-ending convention: offsets of chunks then mean the same thing whatever the source used.
  const normalized = text
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .trim();
  return { title: guessTitle(normalized), mimeType, pages: [{ pageNumber: 1, text: normalized }] };
}

/** The first Markdown heading, else the first non-blank line, cut to 120 characters; null for no text. */
function guessTitle(text: string): string | null {
  const heading = HEADING.exec(text)?.[1]?.trim();
  if (heading) return shorten(heading);
  const line = text
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '');
  return line === undefined ? null : shorten(line);
}

function shorten(line: string): string {
  const chars = [...line]; // by code point: never cut a surrogate pair in half
  if (chars.length <= TITLE_MAX) return line;
  const cut = chars.slice(0, TITLE_MAX - 1).join('');
  const space = cut.lastIndexOf(' ');
  return `${(space > TITLE_MAX / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
