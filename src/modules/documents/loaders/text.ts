/** Plain text and Markdown → one page, with a title guessed from the text when none is given. */
import type { LoadedDocument } from '../types.js';

const TITLE_MAX = 120;
/** An ATX heading's start; its text is cut from the rest of the line by hand (linear whatever follows). */
const HEADING_START = /^ {0,3}#{1,6}[ \t]+/;

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
  const lines = text.split('\n');
  for (const line of lines) {
    const heading = headingText(line);
    if (heading) return shorten(heading);
  }
  const line = lines.map((l) => l.trim()).find((l) => l !== '');
  return line === undefined ? null : shorten(line);
}

/**
 * An ATX heading's text without its optional closing `#`s (CommonMark: a closing run must follow a
 * space or tab). One regex over the line's start, then string work: the single regex that did it all
 * backtracked quadratically over a heading followed by a long run of spaces.
 */
function headingText(line: string): string | null {
  const start = HEADING_START.exec(line);
  if (!start) return null;
  let text = line.slice(start[0].length).trimEnd();
  let end = text.length;
  while (end > 0 && text[end - 1] === '#') end--;
  const closing = text.slice(0, end);
  if (end < text.length && (closing === '' || closing.endsWith(' ') || closing.endsWith('\t')))
    text = closing;
  text = text.trim();
  return text === '' ? null : text;
}

function shorten(line: string): string {
  const chars = [...line]; // by code point: never cut a surrogate pair in half
  if (chars.length <= TITLE_MAX) return line;
  const cut = chars.slice(0, TITLE_MAX - 1).join('');
  const space = cut.lastIndexOf(' ');
  return `${(space > TITLE_MAX / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
