import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../../../core/http/json-guard.js';
import { CodeError, type CodeRun } from '../expressions.js';
import type { BinaryData, Item, Json } from '../types.js';

/**
 * The Python side's answer (prelude.ts's `__n8n_answer`), read and checked on the host. User code runs
 * in the same interpreter as the prelude and can replace what writes the answer (`json.dumps`, the
 * prelude's functions), so the text is untrusted: it must parse, have the answer's shape, and every item
 * must be `{ json: {…} }` with at most well-formed binary entries and a pairing within the input. Anything
 * else fails the node with a clear message, never the host; keys other than the item's own are dropped.
 */

const FILE_TYPES = new Set(['image', 'video', 'audio', 'text', 'json', 'pdf']);
const MESSAGE_CHARS = 2_000;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

class Malformed extends Error {}

function binaryOf(value: unknown, where: string): Record<string, BinaryData> {
  if (!isObject(value)) throw new Malformed(`${where}.binary is not a dictionary`);
  const out: Record<string, BinaryData> = {};
  for (const [key, file] of Object.entries(value)) {
    if (!isObject(file) || typeof file.data !== 'string' || typeof file.mimeType !== 'string')
      throw new Malformed(`${where}.binary.${key} needs 'data' and 'mimeType' strings`);
    const entry: BinaryData = { data: file.data, mimeType: file.mimeType };
    for (const meta of ['fileName', 'fileExtension', 'fileSize'] as const)
      if (typeof file[meta] === 'string') entry[meta] = file[meta];
    if (typeof file.fileType === 'string' && FILE_TYPES.has(file.fileType))
      entry.fileType = file.fileType as BinaryData['fileType'];
    out[key] = entry;
  }
  return out;
}

function itemOf(value: unknown, index: number, inputCount: number): Item {
  const where = `item ${index}`;
  if (!isObject(value) || !isObject(value.json)) throw new Malformed(`${where} has no 'json' dictionary`);
  const item: Item = { json: value.json as Record<string, Json> };
  if (value.binary !== undefined) item.binary = binaryOf(value.binary, where);
  if (value.pairedItem !== undefined) {
    const paired = value.pairedItem;
    if (!isObject(paired) || !Number.isSafeInteger(paired.item) || (paired.item as number) < 0)
      throw new Malformed(`${where}.pairedItem is not {"item": <index>}`);
    if ((paired.item as number) >= Math.max(1, inputCount))
      throw new Malformed(`${where}.pairedItem points past the input items`);
    item.pairedItem = { item: paired.item as number };
  }
  return item;
}

/** The run's items, or the CodeError its answer calls for (its own failure, or a malformed answer). */
export function readAnswer(output: string, logs: CodeRun['logs'], inputCount: number): Item[] {
  let answer: unknown;
  try {
    answer = JSON.parse(output);
  } catch {
    throw malformed('it is not JSON', logs);
  }
  if (!isObject(answer) || typeof answer.ok !== 'boolean') throw malformed('it is not an answer', logs);
  if (!answer.ok) {
    if (typeof answer.message !== 'string') throw malformed('its error has no message', logs);
    const { itemIndex } = answer;
    const index =
      Number.isSafeInteger(itemIndex) && (itemIndex as number) >= 0 && (itemIndex as number) < inputCount
        ? (itemIndex as number)
        : undefined;
    const message =
      answer.message.length > MESSAGE_CHARS ? `${answer.message.slice(0, MESSAGE_CHARS)}…` : answer.message;
    throw new CodeError(message || 'The Python code failed', logs, index);
  }
  if (!Array.isArray(answer.items)) throw malformed('it has no list of items', logs);
  // As deep as the JavaScript Code node allows: deeper would overflow every recursive walk after this one.
  if (nestedDeeperThan(answer.items, MAX_JSON_DEPTH))
    throw new CodeError(`The Python code's items nest deeper than ${MAX_JSON_DEPTH} levels`, logs, undefined);
  try {
    return answer.items.map((item, index) => itemOf(item, index, inputCount));
  } catch (err) {
    if (err instanceof Malformed) throw malformed(err.message, logs);
    throw err;
  }
}

function malformed(why: string, logs: CodeRun['logs']): CodeError {
  return new CodeError(
    `The Python code's answer could not be read: ${why} (was json.dumps or the answer replaced?)`,
    logs,
    undefined,
  );
}
