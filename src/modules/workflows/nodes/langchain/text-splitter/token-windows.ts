import { Tiktoken } from 'js-tiktoken/lite';

/**
 * n8n's Token Splitter (its TokenTextSplitter over js-tiktoken's cl100k_base): the text as tokens, cut
 * into windows of `chunkSize` tokens that start `chunkSize - chunkOverlap` tokens apart, each window
 * decoded back to text. Run in a CPU worker (token.ts): the vocabulary takes ~0.4 s and ~50 MB to
 * load, and BPE is quadratic in a piece's length. Two cases are not tokenized, each bounded instead:
 * - a character repeated 1,000 times in a row: n8n's own rule, the whole text cut by characters
 *   (4 a token), as n8n's `estimateTextSplitsByTokens` does;
 * - a pre-tokenizer piece over LONG_PIECE characters (a run of letters, spaces or punctuation, which
 *   normal text never has): counted a token per 4 of its characters, the text around it exactly.
 *   n8n would tokenize it (a 3,000-letter piece took 1.4 s here, 10,000 took 14 s).
 */
export interface TokenWindowsInput {
  text: string;
  chunkSize: number;
  chunkOverlap: number;
  /** Most windows; more fails the split. */
  maxChunks: number;
}

/** n8n's threshold for "long sequential repeat" (hasLongSequentialRepeat). */
const REPEAT_RUN = 1000;
/** cl100k_base's characters per token in n8n's estimate. */
const CHARS_PER_TOKEN = 4;
const LONG_PIECE = 100;
/** Only a text with a run this long can hold a long piece: cheap to rule out first. */
const LONG_RUN = new RegExp(`\\S{${LONG_PIECE + 1},}|\\s{${LONG_PIECE + 1},}`, 'u');

let encoder: Promise<{ tiktoken: Tiktoken; pieces: RegExp }> | null = null;

/** cl100k_base, loaded once per thread on first use. */
function cl100k(): Promise<{ tiktoken: Tiktoken; pieces: RegExp }> {
  encoder ??= import('js-tiktoken/ranks/cl100k_base').then(({ default: ranks }) => ({
    tiktoken: new Tiktoken(ranks),
    pieces: new RegExp(ranks.pat_str, 'gu'),
  }));
  return encoder;
}

export class TokenWindowsError extends Error {}

export async function tokenWindows(input: TokenWindowsInput): Promise<string[]> {
  const { text, chunkSize, chunkOverlap, maxChunks } = input;
  if (chunkOverlap >= chunkSize) throw new TokenWindowsError('Cannot have chunkOverlap >= chunkSize');
  if (text.length === 0) return [];
  if (hasRepeatRun(text, REPEAT_RUN)) return characterWindows(text, chunkSize, chunkOverlap, maxChunks);
  const { tiktoken, pieces } = await cl100k();
  const tokens = LONG_RUN.test(text) ? tokensAround(text, tiktoken, pieces) : tiktoken.encode(text, 'all');
  const out: string[] = [];
  const step = chunkSize - chunkOverlap;
  for (let start = 0; start < tokens.length; start += step) {
    out.push(decode(tiktoken, tokens.slice(start, start + chunkSize)));
    if (out.length > maxChunks)
      throw new TokenWindowsError(`The text splits into more than ${maxChunks} chunks`);
    if (start + chunkSize >= tokens.length) break;
  }
  return out;
}

/** n8n's hasLongSequentialRepeat: one character (code point) `run` times in a row. */
export function hasRepeatRun(text: string, run: number): boolean {
  if (text.length < run) return false;
  let previous = '';
  let count = 0;
  for (const char of text) {
    count = char === previous ? count + 1 : 1;
    if (count >= run) return true;
    previous = char;
  }
  return false;
}

/** n8n's estimateTextSplitsByTokens for cl100k_base: windows of characters, 4 to a token. */
function characterWindows(
  text: string,
  chunkSize: number,
  chunkOverlap: number,
  maxChunks: number,
): string[] {
  const size = chunkSize * CHARS_PER_TOKEN;
  const overlap = Math.min(chunkOverlap, chunkSize - 1) * CHARS_PER_TOKEN;
  const out: string[] = [];
  for (let start = 0; start < text.length; ) {
    const end = Math.min(start + size, text.length);
    out.push(text.slice(start, end));
    if (out.length > maxChunks)
      throw new TokenWindowsError(`The text splits into more than ${maxChunks} chunks`);
    if (end >= text.length) break;
    start = Math.max(end - overlap, start + 1);
  }
  return out;
}

/** The text's tokens, where a long piece stands as its 4-character slices (strings) instead of ids. */
function tokensAround(text: string, tiktoken: Tiktoken, pieces: RegExp): Array<number | string> {
  const out: Array<number | string> = [];
  const encode = (from: number, to: number): void => {
    if (to > from) for (const id of tiktoken.encode(text.slice(from, to), 'all')) out.push(id);
  };
  let from = 0;
  for (const match of text.matchAll(pieces)) {
    const piece = match[0];
    if (piece.length <= LONG_PIECE) continue;
    encode(from, match.index);
    for (let i = 0; i < piece.length; i += CHARS_PER_TOKEN) out.push(piece.slice(i, i + CHARS_PER_TOKEN));
    from = match.index + piece.length;
  }
  encode(from, text.length);
  return out;
}

/** A window's text: runs of ids decoded together (a character may span two tokens), slices as they are. */
function decode(tiktoken: Tiktoken, window: ReadonlyArray<number | string>): string {
  let text = '';
  let ids: number[] = [];
  for (const token of window) {
    if (typeof token === 'number') ids.push(token);
    else {
      if (ids.length) text += tiktoken.decode(ids);
      ids = [];
      text += token;
    }
  }
  return ids.length ? text + tiktoken.decode(ids) : text;
}
