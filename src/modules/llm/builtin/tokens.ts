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

/** The estimate's running state: text can be fed in pieces (and so across event-loop turns). */
class TokenCounter {
  private wide = 0;
  private words = 0;
  private chars = 0;
  private inWord = false;
  private lastWasSpace = true;
  /** A supplementary Han character's low surrogate, when its high one ended the last piece. */
  private skipNext = false;
  /** Any character fed: a non-empty text is at least one token. */
  private any = false;

  feed(text: string, from = 0, to = text.length): void {
    if (to > from) this.any = true;
    let { wide, words, chars, inWord, lastWasSpace } = this;
    let i = from;
    if (this.skipNext && i < to) {
      i++;
      this.skipNext = false;
    }
    for (; i < to; i++) {
      const code = text.charCodeAt(i);
      if (isWide(code)) {
        wide++;
        inWord = false;
        lastWasSpace = false;
        if (code >= 0xd840 && code <= 0xd87f) {
          // The low surrogate belongs to this character (it may start the next piece).
          if (i + 1 < to) i++;
          else this.skipNext = true;
        }
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
    this.wide = wide;
    this.words = words;
    this.chars = chars;
    this.inWord = inWord;
    this.lastWasSpace = lastWasSpace;
  }

  result(): number {
    if (!this.any) return 0;
    let chars = this.chars;
    if (this.lastWasSpace && chars > 0) chars--; // a trailing space run is trimmed
    const estimate = this.wide + Math.round((chars / 4 + (this.words * 4) / 3) / 2);
    return Math.max(1, estimate);
  }
}

export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  const counter = new TokenCounter();
  counter.feed(text);
  return counter.result();
}

/** Characters counted per event-loop turn by `estimateTokensYielding` (~2 ms). */
const SLICE_CHARS = 1 << 20;

/** Feeds texts to counters in slices, with a turn of the event loop after every `SLICE_CHARS`. */
async function feedYielding(
  texts: readonly string[],
  counterFor: (index: number) => TokenCounter,
  separator: string,
): Promise<void> {
  let budget = SLICE_CHARS;
  for (let t = 0; t < texts.length; t++) {
    const counter = counterFor(t);
    if (t > 0 && separator !== '') counter.feed(separator);
    const text = texts[t]!;
    for (let at = 0; at < text.length; ) {
      const to = Math.min(text.length, at + budget);
      counter.feed(text, at, to);
      budget -= to - at;
      at = to;
      if (budget <= 0) {
        await new Promise((resolve) => setImmediate(resolve));
        budget = SLICE_CHARS;
      }
    }
  }
}

/**
 * `estimateTokens(texts.join(separator))`, counted in slices with a turn of the event loop between
 * them: a 20 MB prompt is counted without holding every other request for ~200 ms.
 */
export async function estimateTokensYielding(texts: readonly string[], separator = ''): Promise<number> {
  const counter = new TokenCounter();
  await feedYielding(texts, () => counter, separator);
  return counter.result();
}

/** The sum of `estimateTokens` of each text (an embedding batch), counted in slices likewise. */
export async function sumTokensYielding(texts: readonly string[]): Promise<number> {
  const counters = texts.map(() => new TokenCounter());
  await feedYielding(texts, (i) => counters[i]!, '');
  return counters.reduce((n, c) => n + c.result(), 0);
}
