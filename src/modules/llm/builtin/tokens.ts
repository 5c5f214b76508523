/**
 * A cheap token estimate for usage reports when an upstream sends no counts (always marked `estimated`).
 *
 * BPE tokenizers give about 4 characters or 0.75 words per token on English prose; code and numbers lean
 * on the character count, short-word prose on the word count, so the two are averaged. Han, kana and
 * Hangul characters are close to one token each and are counted apart (a character count would give a
 * quarter of that). Any non-empty text is at least one token. One pass over the text, no regex: it
 * runs on every embedding input and every answer.
 */

/** Han, Hiragana, Katakana and Hangul (BMP blocks; supplementary Han counts through its surrogates). */
function isWide(code: number): boolean {
  return (
    (code >= 0x3040 && code <= 0x30ff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0xac00 && code <= 0xd7af) ||
    (code >= 0x1100 && code <= 0x11ff) ||
    (code >= 0x3130 && code <= 0x318f) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xd840 && code <= 0xd87f) // high surrogates of CJK extension planes
  );
}

function isSpace(code: number): boolean {
  return (
    code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0xa0 || (code >= 0x2000 && code <= 0x200b)
  );
}

/** ASCII letters and digits, and any other non-space, non-punctuation character past ASCII. */
function isWordChar(code: number): boolean {
  if (code < 0x80)
    return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
  return !isSpace(code) && !(code >= 0x2010 && code <= 0x206f) && !(code >= 0x3000 && code <= 0x303f);
}

export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  let wide = 0;
  let words = 0;
  let chars = 0;
  let inWord = false;
  let lastWasSpace = true;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (isWide(code)) {
      wide++;
      inWord = false;
      lastWasSpace = false;
      if (code >= 0xd840 && code <= 0xd87f) i++; // the low surrogate belongs to this character
      continue;
    }
    if (isSpace(code)) {
      // Runs of spaces count once, as the collapsed text would.
      if (!lastWasSpace) chars++;
      lastWasSpace = true;
      inWord = false;
      continue;
    }
    chars++;
    lastWasSpace = false;
    if (isWordChar(code)) {
      if (!inWord) words++;
      inWord = true;
    } else inWord = false;
  }
  if (lastWasSpace && chars > 0) chars--; // a trailing space run is trimmed
  const estimate = wide + Math.round((chars / 4 + (words * 4) / 3) / 2);
  return Math.max(1, estimate);
}
