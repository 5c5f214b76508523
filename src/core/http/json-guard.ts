import { AppError } from '../errors.js';

/**
 * How deep a request body may nest. Real payloads stay far below; thousands of levels overflow the
 * stack of every recursive walk after parsing (validation, JSON.stringify when stored).
 */
export const MAX_JSON_DEPTH = 128;

type JsonProblem = { kind: 'depth' } | { kind: 'nul'; path: string } | { kind: 'infinite'; path: string };

const NUL = '\u0000';

/** `a.b.0`: where a problem sits, for the 400. */
const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));

/**
 * The first value of a parsed JSON body the platform refuses, walked without recursion:
 * nesting past `max`; a NUL (U+0000) in a key or a string, which PostgreSQL cannot store in text;
 * a number that overflowed to ±Infinity (`1e400`), which JSON.stringify would turn into null.
 * The walk builds no path (a string per value made 1 MB of `[0,0,…]` take half a second); only when
 * something is found is the walk repeated with paths, to name it.
 */
export function findJsonProblem(value: unknown, max = MAX_JSON_DEPTH): JsonProblem | null {
  const found = firstProblem(value, max);
  if (!found || found === 'depth') return found ? { kind: 'depth' } : null;
  return locate(value, found);
}

/** Whether a parsed JSON value nests deeper than `max` levels (walked without recursion). */
export function nestedDeeperThan(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const nodes: unknown[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop();
    const depth = depths.pop() as number;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child === null || typeof child !== 'object') continue;
      nodes.push(child);
      depths.push(depth + 1);
    }
  }
  return false;
}

const badLeaf = (v: unknown) =>
  typeof v === 'string' ? v.includes(NUL) : typeof v === 'number' && !Number.isFinite(v);

/** The offending value (or key holder), or 'depth'; null when the body is fine. */
function firstProblem(value: unknown, max: number): 'depth' | { at: unknown } | null {
  if (badLeaf(value)) return { at: value };
  const nodes: unknown[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop();
    const depth = depths.pop() as number;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return 'depth';
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i];
        if (child !== null && typeof child === 'object') {
          nodes.push(child);
          depths.push(depth + 1);
        } else if (badLeaf(child)) return { at: node };
      }
      continue;
    }
    for (const key in node) {
      const child: unknown = (node as Record<string, unknown>)[key];
      if (key.includes(NUL)) return { at: node };
      if (child !== null && typeof child === 'object') {
        nodes.push(child);
        depths.push(depth + 1);
      } else if (badLeaf(child)) return { at: node };
    }
  }
  return null;
}

/** The path of the problem inside `holder` (found by identity), walked again with paths. */
function locate(value: unknown, found: { at: unknown }): JsonProblem | null {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [node, path] = stack.pop() as [unknown, string];
    if (typeof node === 'string') {
      if (node.includes(NUL)) return { kind: 'nul', path };
      continue;
    }
    if (typeof node === 'number') {
      if (!Number.isFinite(node)) return { kind: 'infinite', path };
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    const holder = node === found.at;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        if (holder || (node[i] !== null && typeof node[i] === 'object')) stack.push([node[i], join(path, i)]);
      }
      continue;
    }
    for (const key in node) {
      if (key.includes(NUL)) return { kind: 'nul', path: join(path, key.replaceAll(NUL, '\\u0000')) };
      const child: unknown = (node as Record<string, unknown>)[key];
      if (holder || (child !== null && typeof child === 'object')) stack.push([child, join(path, key)]);
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
