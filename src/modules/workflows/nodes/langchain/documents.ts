import { NodeOperationError } from '../../engine/node-type.js';
import type { Item, Json } from '../../engine/types.js';
import type { AiDocument, TextSplitter } from './ai-parts.js';

/**
 * n8n's document loading (N8nJsonLoader, N8nBinaryLoader): an item's JSON gives one document per string
 * value (LangChain's JSONLoader), a text gives one; metadata is added, then the splitter cuts each into
 * chunks that carry the lines they came from (`loc.lines`), as LangChain's `splitDocuments` does.
 */

const MAX_DOCUMENTS = 20_000;
const MAX_TEXT_CHARS = 20_000_000;
/** Deepest JSON the loaders read: a deeper file is refused by name (a recursive walk overflowed the stack). */
export const MAX_LOADER_JSON_DEPTH = 1_000;

/**
 * LangChain's JSONLoader: every string value of the JSON, depth first, in order; walked with a stack of
 * its own, so nesting past MAX_LOADER_JSON_DEPTH is a clear error, not a stack overflow.
 */
export function jsonStrings(value: unknown, out: string[] = []): string[] {
  const stack: Array<{ values: unknown[]; at: number }> = [{ values: [value], at: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as { values: unknown[]; at: number };
    if (top.at >= top.values.length) {
      stack.pop();
      continue;
    }
    const v = top.values[top.at++];
    if (typeof v === 'string') {
      out.push(v);
      if (out.length > MAX_DOCUMENTS)
        throw new NodeOperationError(`The data gives more than ${MAX_DOCUMENTS} documents`);
    } else if (v && typeof v === 'object') {
      if (stack.length >= MAX_LOADER_JSON_DEPTH)
        throw new NodeOperationError(
          `The JSON is nested deeper than ${MAX_LOADER_JSON_DEPTH} levels: flatten it, or point at a part of it`,
        );
      stack.push({ values: Array.isArray(v) ? v : Object.values(v), at: 0 });
    }
  }
  return out;
}

export function jsonDocuments(json: unknown): AiDocument[] {
  return jsonStrings(json).map((text, i) => ({
    pageContent: text,
    metadata: { source: 'blob', blobType: 'application/json', line: i + 1 },
  }));
}

export function textDocument(text: string, blobType = 'text/plain'): AiDocument {
  if (text.length > MAX_TEXT_CHARS)
    throw new NodeOperationError(`The text to load is longer than ${MAX_TEXT_CHARS} characters`);
  return { pageContent: text, metadata: { source: 'blob', blobType } };
}

/** The item's binary property as text (text and JSON types only). */
export function binaryText(item: Item | undefined, key: string): { text: string; mimeType: string } {
  const file = item?.binary?.[key];
  if (!file) throw new NodeOperationError(`The item has no binary property '${key}'`);
  const mimeType = file.mimeType ?? 'application/octet-stream';
  if (!/^text\/|^application\/(json|xml|csv)/.test(mimeType))
    throw new NodeOperationError(
      `Loading '${mimeType}' files is not supported here (text, CSV, JSON and XML are)`,
    );
  return { text: Buffer.from(file.data, 'base64').toString('utf8'), mimeType };
}

/** Each document cut by the splitter, the chunks keeping its metadata plus the lines they span. */
export async function splitDocuments(
  documents: AiDocument[],
  splitter: TextSplitter | undefined,
): Promise<AiDocument[]> {
  if (!splitter) return documents;
  const out: AiDocument[] = [];
  for (const doc of documents) {
    const text = doc.pageContent;
    let searchFrom = 0;
    // Lines are counted on from the last chunk's start, not from the text's: once over the text.
    let lineFrom = 0;
    let line = 1;
    for (const chunk of await splitter.split(text)) {
      const at = text.indexOf(chunk, Math.max(0, searchFrom));
      const start = at === -1 ? searchFrom : at;
      if (start < lineFrom) {
        lineFrom = 0;
        line = 1;
      }
      line += newlines(text, lineFrom, start);
      lineFrom = start;
      const from = line;
      const to = from + newlines(chunk, 0, chunk.length);
      if (at !== -1) searchFrom = at + 1;
      // LangChain keeps a loader's `loc` (a PDF's page number) and adds the lines.
      const loc = doc.metadata.loc;
      const kept = loc && typeof loc === 'object' && !Array.isArray(loc) ? loc : {};
      out.push({ pageContent: chunk, metadata: { ...doc.metadata, loc: { ...kept, lines: { from, to } } } });
      if (out.length > MAX_DOCUMENTS)
        throw new NodeOperationError(`The data splits into more than ${MAX_DOCUMENTS} documents`);
    }
  }
  return out;
}

/** The line feeds in `text` from `from` up to `to`. */
function newlines(text: string, from: number, to: number): number {
  let count = 0;
  for (let i = text.indexOf('\n', from); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) count++;
  return count;
}

/** n8n's metadata option (`{metadataValues: [{name, value}]}`) added to each document. */
export function withMetadata(
  documents: AiDocument[],
  values: Array<{ name: string; value: Json }>,
): AiDocument[] {
  if (values.length === 0) return documents;
  const extra = Object.fromEntries(values.map((v) => [v.name, v.value]));
  return documents.map((d) => ({ ...d, metadata: { ...d.metadata, ...extra } }));
}
