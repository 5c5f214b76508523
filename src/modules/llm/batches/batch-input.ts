/**
 * A batch's input file: JSONL, one request a line (`{custom_id, method: "POST", url, body}`), every
 * line for the batch's endpoint. Read whole when the batch is created, so a bad file is a 400 naming
 * its first bad line instead of a batch that fails later.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { AppError } from '../../../core/errors.js';

/** The endpoints a batch may run (OpenAI's, of those this gateway serves). */
export const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/embeddings'] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];
/** OpenAI's bound on the requests of one batch. */
export const MAX_BATCH_LINES = 50_000;
const MAX_CUSTOM_ID = 512;

export interface BatchLine {
  /** 1-based line of the input file, for errors. */
  line: number;
  customId: string;
  body: Record<string, unknown>;
}

const invalid = (line: number, message: string) =>
  new AppError('VALIDATION_ERROR', `Invalid input file: line ${line}: ${message}`, {
    fields: [{ field: 'body.input_file_id', message: `line ${line}: ${message}` }],
    line,
  });

/** Characters parsed between two yields to the event loop: a 50 MB file must not hold it for a second. */
const YIELD_EVERY_CHARS = 512 * 1024;

/**
 * The requests of a JSONL input file, or a 400 naming the first line that is not one for `endpoint`.
 * Parsed across event-loop turns. With `keep: false` (a check at creation) the bodies are not held:
 * `lines` is empty and `count` says how many there are.
 */
export async function parseBatchInput(
  text: string,
  endpoint: BatchEndpoint,
  options: { keep?: boolean } = {},
): Promise<{ count: number; lines: BatchLine[] }> {
  const keep = options.keep ?? true;
  const lines: BatchLine[] = [];
  const seen = new Set<string>();
  let count = 0;
  let number = 0;
  let sinceYield = 0;
  for (let start = 0; start <= text.length; ) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const raw = text.slice(start, end);
    start = end + 1;
    number++;
    sinceYield += raw.length + 1;
    if (sinceYield >= YIELD_EVERY_CHARS) {
      sinceYield = 0;
      await nextTurn();
    }
    const trimmed = raw.trim();
    if (trimmed === '') continue;
    if (count === MAX_BATCH_LINES) throw invalid(number, `a batch holds at most ${MAX_BATCH_LINES} requests`);
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      throw invalid(number, 'is not JSON');
    }
    if (!value || typeof value !== 'object' || Array.isArray(value))
      throw invalid(number, 'is not a JSON object');
    const { custom_id: customId, method, url, body } = value as Record<string, unknown>;
    if (typeof customId !== 'string' || customId === '' || customId.length > MAX_CUSTOM_ID)
      throw invalid(number, `custom_id must be a string of 1 to ${MAX_CUSTOM_ID} characters`);
    if (seen.has(customId)) throw invalid(number, `custom_id "${customId}" is used twice`);
    seen.add(customId);
    if (method !== 'POST') throw invalid(number, 'method must be "POST"');
    if (url !== endpoint) throw invalid(number, `url must be the batch's endpoint, ${endpoint}`);
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw invalid(number, 'body must be an object');
    if ((body as Record<string, unknown>).stream === true)
      throw invalid(number, 'body.stream is not supported in a batch');
    count++;
    if (keep) lines.push({ line: number, customId, body: body as Record<string, unknown> });
  }
  if (count === 0) throw invalid(number, 'the file holds no requests');
  return { count, lines };
}
