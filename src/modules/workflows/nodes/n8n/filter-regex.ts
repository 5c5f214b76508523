import { createContext, Script } from 'node:vm';
import { NodeOperationError } from '../../engine/node-type.js';

/**
 * A user's regular expression runs with a time bound: V8's backtracking engine can take exponential
 * time on patterns such as `(a+)+$`, and a `vm` timeout interrupts a running match (the repo has no
 * safe-regex helper of its own). Costs about 0.2 ms per test, which is fine per item.
 */
export const REGEX_TIMEOUT_MS = 100;

const sandbox = createContext({});
/**
 * Patterns that ran out of time once fail at once afterwards: with "continue on fail", a catastrophic
 * pattern over many items would otherwise hold the event loop for the bound on every item.
 */
const timedOut = new Set<string>();
const TIMED_OUT_MAX = 1_000;
const testScript = new Script('re.test(input)');

/** `/body/flags` or a bare body; ignoring case adds the `i` flag (n8n's parseRegexPattern). */
export function parseRegex(pattern: string, ignoreCase: boolean): RegExp {
  const literal = /^\/(.*?)\/([gimusy]*)$/.exec(pattern);
  try {
    if (!literal) return new RegExp(pattern, ignoreCase ? 'i' : '');
    const flags = literal[2] ?? '';
    return new RegExp(literal[1] ?? '', ignoreCase && !flags.includes('i') ? `${flags}i` : flags);
  } catch (err) {
    throw new NodeOperationError((err as Error).message);
  }
}

export function filterRegexTest(
  pattern: string,
  input: string,
  ignoreCase: boolean,
  at: { index: number; itemIndex: number },
): boolean {
  const re = parseRegex(pattern, ignoreCase);
  const key = String(re);
  if (timedOut.has(key)) throw tooSlow(re, at);
  sandbox.re = re;
  sandbox.input = input;
  try {
    return testScript.runInContext(sandbox, { timeout: REGEX_TIMEOUT_MS }) === true;
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
      if (timedOut.size >= TIMED_OUT_MAX) timedOut.clear();
      timedOut.add(key);
      throw tooSlow(re, at);
    }
    throw err;
  } finally {
    sandbox.re = undefined;
    sandbox.input = undefined;
  }
}

function tooSlow(re: RegExp, at: { index: number; itemIndex: number }): NodeOperationError {
  return new NodeOperationError(
    `The regular expression ${re} took longer than ${REGEX_TIMEOUT_MS} ms [condition ${at.index}, item ${at.itemIndex}]`,
    { description: 'Simplify the expression: nested repetition such as (a+)+ can take exponential time.' },
  );
}
