import { NodeOperationError } from '../../../engine/node-type.js';
import { MAX_CHUNKS, type SplitOptions } from './split.js';

/**
 * LangChain's TokenTextSplitter (n8n's Token Splitter): the text as tokens, cut into windows of
 * `chunkSize` tokens that start `chunkSize - chunkOverlap` tokens apart. The project has no BPE
 * vocabulary (tiktoken's cl100k_base is ~1.7 MB of data), so tokens are approximated: the text is cut
 * as cl100k_base's pre-tokenizer cuts it (contractions, a word with its leading space or punctuation,
 * numbers of up to 3 digits, punctuation runs, whitespace), and a piece longer than 6 characters counts
 * one token per 4 characters (BPE splits long and rare words). A chunk is the text of its pieces, so
 * the chunks are exact slices of the input.
 */
const PIECE =
  /'(?:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/giu;
const WHOLE_PIECE = 6;
const CHARS_PER_TOKEN = 4;

/** The approximate tokens of a text, each a slice of it, in order. */
export function approximateTokens(text: string): string[] {
  const out: string[] = [];
  for (const [piece] of text.matchAll(PIECE)) {
    if (piece.length <= WHOLE_PIECE) out.push(piece);
    else
      for (let i = 0; i < piece.length; i += CHARS_PER_TOKEN) out.push(piece.slice(i, i + CHARS_PER_TOKEN));
  }
  return out;
}

export function splitTokens(text: string, o: SplitOptions): string[] {
  if (o.chunkOverlap >= o.chunkSize) throw new NodeOperationError('Cannot have chunkOverlap >= chunkSize');
  const tokens = approximateTokens(text);
  const out: string[] = [];
  const step = o.chunkSize - o.chunkOverlap;
  for (let start = 0; start < tokens.length; start += step) {
    out.push(tokens.slice(start, start + o.chunkSize).join(''));
    if (out.length > MAX_CHUNKS)
      throw new NodeOperationError(`The text splits into more than ${MAX_CHUNKS} chunks`);
    if (start + o.chunkSize >= tokens.length) break;
  }
  return out;
}
