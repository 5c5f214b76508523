import { AppError } from '../errors.js';

/**
 * How deep a request body may nest. Real payloads stay far below; thousands of levels overflow the
 * stack of every recursive walk after parsing (validation, JSON.stringify when stored).
 */
export const MAX_JSON_DEPTH = 128;

export type JsonProblem =
  | { kind: 'depth' }
  | { kind: 'nul'; path: string }
  | { kind: 'infinite'; path: string };

const NUL = '\u0000';

/** `a.b.0`: where a problem sits, for the 400. */
const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));

/**
 * The first value of a parsed JSON body the platform refuses, walked without recursion:
 * nesting past `max`; a NUL (U+0000) in a key or a string, which PostgreSQL cannot store in text;
 * a number that overflowed to ±Infinity (`1e400`), which JSON.stringify would turn into null.
 */
export function findJsonProblem(value: unknown, max = MAX_JSON_DEPTH): JsonProblem | null {
  const stack: Array<[unknown, number, string]> = [[value, 1, '']];
  while (stack.length > 0) {
    const [node, depth, path] = stack.pop() as [unknown, number, string];
    if (typeof node === 'string') {
      if (node.includes(NUL)) return { kind: 'nul', path };
      continue;
    }
    if (typeof node === 'number') {
      if (!Number.isFinite(node)) return { kind: 'infinite', path };
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return { kind: 'depth' };
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) stack.push([node[i], depth + 1, join(path, i)]);
      continue;
    }
    for (const [key, child] of Object.entries(node)) {
      if (key.includes(NUL)) return { kind: 'nul', path: join(path, key.replaceAll(NUL, '\\u0000')) };
      stack.push([child, depth + 1, join(path, key)]);
    }
  }
  return null;
}

/** Throws the 400 for a parsed body the platform refuses (see findJsonProblem). */
export function assertSafeJson(value: unknown): void {
  const problem = findJsonProblem(value);
  if (!problem) return;
  if (problem.kind === 'depth') {
    throw new AppError('VALIDATION_ERROR', `The body nests deeper than ${MAX_JSON_DEPTH} levels`, {
      maxDepth: MAX_JSON_DEPTH,
    });
  }
  const field = problem.path ? `body.${problem.path}` : 'body';
  const message =
    problem.kind === 'nul'
      ? 'must not contain the NUL character (U+0000)'
      : 'is a number too large to represent (it overflows to Infinity)';
  throw new AppError('VALIDATION_ERROR', 'Invalid body', { fields: [{ field, message }] });
}
