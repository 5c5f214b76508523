/**
 * A cheap token estimate for usage reports when an upstream sends no counts (always marked `estimated`).
 *
 * BPE tokenizers give about 4 characters or 0.75 words per token on English prose; code and numbers lean
 * on the character count, short-word prose on the word count, so the two are averaged. Han, kana and
 * Hangul characters are close to one token each and are counted apart (a character count would give a
 * quarter of that). Any non-empty text is at least one token.
 */
const WIDE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu;
const WORD = /[\p{L}\p{N}]+/gu;

export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  const wide = text.match(WIDE)?.length ?? 0;
  const rest = wide === 0 ? text : text.replace(WIDE, ' ');
  const words = rest.match(WORD)?.length ?? 0;
  const chars = rest.replace(/\s+/g, ' ').trim().length;
  const estimate = wide + Math.round((chars / 4 + (words * 4) / 3) / 2);
  return Math.max(1, estimate);
}
