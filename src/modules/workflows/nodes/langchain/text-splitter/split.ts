import { NodeOperationError } from '../../../engine/node-type.js';

/**
 * LangChain's character splitters (what n8n's text splitter nodes build): split on the first separator
 * found, recurse into pieces still too long with the next one, then merge the pieces into chunks of at
 * most `chunkSize` characters overlapping by up to `chunkOverlap`. Bounded in chunks.
 */

export const MAX_CHUNKS = 20_000;
export const RECURSIVE_SEPARATORS = ['\n\n', '\n', ' ', ''];

export interface SplitOptions {
  chunkSize: number;
  chunkOverlap: number;
}

function checked(o: SplitOptions): SplitOptions {
  if (o.chunkOverlap >= o.chunkSize) throw new NodeOperationError('Cannot have chunkOverlap >= chunkSize');
  return o;
}

export function splitRecursive(
  text: string,
  options: SplitOptions,
  separators = RECURSIVE_SEPARATORS,
): string[] {
  const o = checked(options);
  const out: string[] = [];
  recurse(text, separators, o, out);
  return out;
}

export function splitCharacter(text: string, separator: string, options: SplitOptions): string[] {
  const o = checked(options);
  const out: string[] = [];
  push(out, merge(splitOn(text, separator, false), separator, o));
  return out;
}

function recurse(text: string, separators: string[], o: SplitOptions, out: string[]): void {
  let separator = separators.at(-1) ?? '';
  let rest: string[] = [];
  for (let i = 0; i < separators.length; i++) {
    const s = separators[i] ?? '';
    if (s === '' || text.includes(s)) {
      separator = s;
      rest = separators.slice(i + 1);
      break;
    }
  }
  let good: string[] = [];
  for (const piece of splitOn(text, separator, true)) {
    if (piece.length < o.chunkSize) {
      good.push(piece);
      continue;
    }
    if (good.length > 0) {
      push(out, merge(good, '', o));
      good = [];
    }
    if (rest.length === 0) push(out, [piece]);
    else recurse(piece, rest, o, out);
  }
  if (good.length > 0) push(out, merge(good, '', o));
}

function push(out: string[], chunks: string[]): void {
  out.push(...chunks);
  if (out.length > MAX_CHUNKS)
    throw new NodeOperationError(`The text splits into more than ${MAX_CHUNKS} chunks`);
}

/** The pieces between separators; kept, a separator starts the piece after it. */
function splitOn(text: string, separator: string, keep: boolean): string[] {
  let pieces: string[];
  if (separator === '') pieces = [...text];
  else if (keep)
    pieces = text.split(new RegExp(`(?=${separator.replace(/[/\-\\^$*+?.()|[\]{}]/g, '\\$&')})`));
  else pieces = text.split(separator);
  return pieces.filter((p) => p !== '');
}

function merge(pieces: string[], separator: string, o: SplitOptions): string[] {
  const docs: string[] = [];
  const current: string[] = [];
  let total = 0;
  const sep = separator.length;
  for (const piece of pieces) {
    const len = piece.length;
    if (total + len + (current.length > 0 ? sep : 0) > o.chunkSize && current.length > 0) {
      const doc = join(current, separator);
      if (doc !== null) docs.push(doc);
      while (
        total > o.chunkOverlap ||
        (total + len + (current.length > 0 ? sep : 0) > o.chunkSize && total > 0)
      ) {
        total -= (current[0]?.length ?? 0) + (current.length > 1 ? sep : 0);
        current.shift();
      }
    }
    current.push(piece);
    total += len + (current.length > 1 ? sep : 0);
  }
  const doc = join(current, separator);
  if (doc !== null) docs.push(doc);
  return docs;
}

function join(pieces: string[], separator: string): string | null {
  const text = pieces.join(separator).trim();
  return text === '' ? null : text;
}
