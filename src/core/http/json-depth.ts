import { AppError } from '../errors.js';

/**
 * How deep a request body may nest. Real payloads stay far below; thousands of levels overflow the
 * stack of every recursive walk after parsing (validation, JSON.stringify when stored).
 */
export const MAX_JSON_DEPTH = 128;

/** Depth of a parsed JSON value, walked without recursion; stops once past `max`. */
export function exceedsDepth(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** Throws the 400 for a body nested deeper than the platform accepts. */
export function assertDepth(value: unknown): void {
  if (exceedsDepth(value)) {
    throw new AppError('VALIDATION_ERROR', `The body nests deeper than ${MAX_JSON_DEPTH} levels`, {
      maxDepth: MAX_JSON_DEPTH,
    });
  }
}
