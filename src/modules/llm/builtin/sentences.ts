/**
 * Sentence splitting for the extractive answerer: good enough for prose, lists and chat messages,
 * without a model. A sentence ends
 * - at a line break (list items, headings and table rows are units of their own);
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
      push(i);
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
