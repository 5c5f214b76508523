/**
 * Sentence splitting for the extractive answerer: good enough for prose, lists and chat messages,
 * without a model. A sentence ends
 * - at a line break (list items, headings and table rows are units of their own), except a soft wrap:
 *   a long line (hard-wrapped Markdown, ≥ `WRAPPED_LINE` characters) that is no heading or table row,
 *   followed by a line that starts no block (no bullet, number, heading, table, quote or fence) and either
 *   continues in lower case or a digit, or follows a line that ended mid-sentence (no closing `.!?:;…`).
 *   Without this, a document wrapped at 100 columns yields halves of sentences;
 * - after `.`, `!`, `?` or `…` (and any closing quotes or brackets) followed by white space, unless the
 *   word before the dot is a known abbreviation (`e.g.`, `Dr.`, `vs.`), a dotted acronym (`U.S.`), a
 *   single capital initial (`J. Smith`), or the next word starts in lower case or with a digit
 *   (`approx. 3`, `… and so on`). A dot between digits (`3.14`) is never followed by space, so it stays;
 * - right after a CJK full stop, exclamation or question mark (`。！？`), which take no space after them.
 */

/** Abbreviations that do not end a sentence even before a capital letter (lowercase, without the dot). */
const ABBREVIATIONS = new Set([
  'e.g',
  'i.e',
  'cf',
  'vs',
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'sr',
  'jr',
  'st',
  'mt',
  'no',
  'nos',
  'fig',
  'figs',
  'eq',
  'ref',
  'vol',
  'pp',
  'ch',
  'sec',
  'approx',
  'ca',
  'inc',
  'ltd',
  'co',
  'corp',
  'dept',
  'est',
  'jan',
  'feb',
  'mar',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
]);

const CLOSERS = new Set(['"', "'", ')', ']', '}', '»', '”', '’']);
const ENDERS = new Set(['.', '!', '?', '…']);
const CJK_ENDERS = new Set(['。', '！', '？']);

export function splitSentences(text: string): string[] {
  const sentences: string[] = [];
  let start = 0;
  const push = (end: number): void => {
    const sentence = text.slice(start, end).replace(/\s+/g, ' ').trim();
    if (/[\p{L}\p{N}]/u.test(sentence)) sentences.push(sentence);
    start = end;
  };

  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\n' || ch === '\r') {
      if (!softWrapAt(text, i)) push(i);
      continue;
    }
    if (CJK_ENDERS.has(ch)) {
      let end = i + 1;
      while (end < text.length && CLOSERS.has(text[end]!)) end++;
      push(end);
      i = end - 1;
      continue;
    }
    if (!ENDERS.has(ch)) continue;
    // Take the whole run of enders and closers (`?!`, `...`, `.)"`).
    let end = i + 1;
    while (end < text.length && (ENDERS.has(text[end]!) || CLOSERS.has(text[end]!))) end++;
    if (end < text.length && !/\s/.test(text[end]!)) {
      i = end - 1;
      continue;
    }
    if (ch === '.' && end - i === 1 && !endsSentenceAt(text, i)) {
      i = end - 1;
      continue;
    }
    if (!nextStartsSentence(text, end)) {
      i = end - 1;
      continue;
    }
    push(end);
    i = end - 1;
  }
  push(text.length);
  return sentences;
}

/** Lines at least this long are taken as hard-wrapped prose (chat lines are short or end their sentence). */
const WRAPPED_LINE = 50;
/** A line that starts a Markdown block of its own. */
const BLOCK_START = /^(?:#{1,6}\s|[-*+]\s|\d{1,3}[.)]\s|[|>]|```|~~~|-{3,}|\*{3,}|_{3,})/;
/** A line that ends its sentence (or its clause, before a list). */
const ENDS_SENTENCE = /[.!?:;…。！？]["')\]}»”’*_`]*$/;

/** Whether the line break at `at` only wraps a long line of a paragraph or list item. */
function softWrapAt(text: string, at: number): boolean {
  if (text[at] === '\r' && text[at + 1] === '\n') return false; // the `\n` of this pair decides
  const lineStart = Math.max(text.lastIndexOf('\n', at - 1), text.lastIndexOf('\r', at - 1)) + 1;
  const line = text.slice(lineStart, at).trim();
  if (line.length < WRAPPED_LINE || /^(?:#{1,6}\s|\||```|~~~)/.test(line)) return false;
  let next = at + 1;
  while (next < text.length && (text[next] === ' ' || text[next] === '\t')) next++;
  const first = text[next];
  if (first === undefined || first === '\n' || first === '\r') return false;
  if (BLOCK_START.test(text.slice(next, next + 4))) return false;
  return /[\p{Ll}\p{N}]/u.test(first) || !ENDS_SENTENCE.test(line);
}

/**
 * Whether a chunk cut from a longer text starts or ends inside a sentence: it starts in lower case (the
 * rest of a sentence begun in the previous chunk), or its last line is a long line of prose that does not
 * end its sentence (a soft wrap would have joined it to the next line, which the next chunk holds).
 */
export function cutEdges(chunk: string): { start: boolean; end: boolean } {
  const start = /^[\p{Ll}]/u.test(chunk.trimStart());
  const text = chunk.trimEnd();
  const line = text.slice(Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r')) + 1).trim();
  const end =
    line.length >= WRAPPED_LINE && !/^(?:#{1,6}\s|\||```|~~~)/.test(line) && !ENDS_SENTENCE.test(line);
  return { start, end };
}

/** Whether the single dot at `dot` closes a sentence, judging by the word before it. */
function endsSentenceAt(text: string, dot: number): boolean {
  let from = dot;
  while (from > 0 && !/\s/.test(text[from - 1]!)) from--;
  const word = text.slice(from, dot).replace(/^[("'[“‘«]+/, '');
  if (word.length === 0) return true;
  if (ABBREVIATIONS.has(word.toLowerCase())) return false;
  // Dotted acronyms and initials: `U.S.`, `e.g.` written without the set, `J.`
  if (/^(\p{L}\.)+\p{L}$/u.test(word)) return false;
  if (/^\p{Lu}$/u.test(word)) return false;
  return true;
}

/** A new sentence starts at the first non-space character after `end` unless it is lower case or a digit. */
function nextStartsSentence(text: string, end: number): boolean {
  let i = end;
  while (i < text.length && /[ \t]/.test(text[i]!)) i++;
  if (i >= text.length) return true;
  const next = text[i]!;
  if (next === '\n' || next === '\r') return true;
  return !/[\p{Ll}\p{N}]/u.test(next);
}
