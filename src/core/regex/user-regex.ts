import { setImmediate as nextTurn } from 'node:timers/promises';
import { RE2JS } from 're2js';
import { jsToRe2, type Re2Translation } from './js-to-re2.js';
import { RegexPool, type RegexPoolOptions } from './regex-pool.js';

/**
 * Every regular expression a caller writes (a node parameter, an expression's result) is matched here,
 * never with `new RegExp` on the server's thread: V8's engine backtracks, and `(a+)+$` over a few dozen
 * characters takes minutes. JavaScript syntax and flags are kept (n8n's semantics):
 *
 * - a pattern RE2 can express with the same meaning runs on the linear-time engine (re2js), on this
 *   thread when the work is small (pattern × input below a budget), else on a worker thread;
 * - a pattern only JavaScript can run (backreferences, lookaround…) runs on a worker thread that is
 *   terminated at the deadline.
 *
 * Either way the event loop is held for at most a slice of a few milliseconds per test, and a loop of
 * tests yields between slices.
 */

export interface UserRegex {
  /** The JavaScript pattern and flags, as the user wrote them (flags possibly with `i` added). */
  readonly source: string;
  readonly flags: string;
  /** `/source/flags`, for messages. */
  toString(): string;
}

type RegexFailure = 'syntax' | 'too-long' | 'timeout' | 'memory';

/** A pattern refused, or a test that could not finish in its bounds; callers word it for their users. */
export class UserRegexError extends Error {
  constructor(
    readonly reason: RegexFailure,
    message: string,
  ) {
    super(message);
    this.name = 'UserRegexError';
  }
}

interface UserRegexOptions extends RegexPoolOptions {
  /** Longest pattern accepted, in characters. */
  maxPatternLength: number;
  /** Pattern length × input length above which even the linear engine runs on a worker. */
  inlineBudget: number;
}

const DEFAULTS: UserRegexOptions = {
  workers: 2,
  timeoutMs: 500,
  heapMb: 128,
  maxPatternLength: 10_000,
  inlineBudget: 200_000,
};

let options = DEFAULTS;
let pool: RegexPool | undefined;

/** Sizes and bounds from configuration; the worker pool is replaced on its next use. */
export function configureUserRegex(next: Partial<UserRegexOptions>): void {
  const before = options;
  options = { ...options, ...next };
  const same = (['workers', 'timeoutMs', 'heapMb'] as const).every((k) => before[k] === options[k]);
  if (same) return;
  const old = pool;
  pool = undefined;
  void old?.close();
}

/** Stops the worker threads (tests, shutdown); the next test starts new ones. */
export async function closeUserRegexPool(): Promise<void> {
  const old = pool;
  pool = undefined;
  await old?.close();
}

const FLAGS = /^[dgimsuvy]*$/;

/**
 * n8n's `parseRegexPattern`: `/body/flags` is a literal with its flags, anything else the whole pattern;
 * ignoring case adds `i`. Throws UserRegexError('syntax') with the RegExp constructor's message.
 */
export function parseUserRegex(pattern: string, ignoreCase = false): UserRegex {
  if (pattern.length > options.maxPatternLength) {
    throw new UserRegexError(
      'too-long',
      `The regular expression is longer than ${options.maxPatternLength} characters`,
    );
  }
  const literal = /^\/(.*?)\/([gimusy]*)$/.exec(pattern);
  const source = literal ? (literal[1] ?? '') : pattern;
  let flags = literal ? (literal[2] ?? '') : '';
  if (ignoreCase && !flags.includes('i')) flags += 'i';
  return compileUserRegex(source, flags);
}

/** A pattern and flags as JavaScript's RegExp takes them; validated (compiling is linear, matching is not). */
function compileUserRegex(source: string, flags: string): UserRegex {
  if (!FLAGS.test(flags))
    throw new UserRegexError('syntax', `Invalid flags supplied to RegExp constructor '${flags}'`);
  try {
    // Only parses: V8 compiles the matcher lazily, at the first exec, which never happens here.
    new RegExp(source, flags);
  } catch (err) {
    throw new UserRegexError('syntax', (err as Error).message);
  }
  return { source, flags, toString: () => `/${source}/${flags}` };
}

/** Whether the pattern matches somewhere in the input (RegExp.prototype.test on a fresh RegExp). */
export async function userRegexTest(re: UserRegex, input: string): Promise<boolean> {
  const plan = planOf(re);
  if (plan.re2 && re2Fits(re, plan.re2, input)) {
    const compiled = plan.compiled === undefined ? compileRe2(plan) : plan.compiled;
    if (compiled && re.source.length * input.length <= options.inlineBudget) {
      await yieldIfDue();
      return compiled.test(input);
    }
    if (compiled) {
      return onWorker(re, { engine: 're2', source: plan.re2.pattern, flags: re2Flags(plan.re2), input });
    }
  }
  return onWorker(re, { engine: 'js', source: re.source, flags: re.flags, input });
}

// --- the plan of a pattern: its RE2 form (if any) and compiled program, cached ----------------------

interface Plan {
  re2: Re2Translation | null;
  /** undefined: not compiled yet; null: RE2 refused it (too large, a construct it lacks). */
  compiled?: RE2JS | null;
}

const PLANS_MAX = 1_000;
const plans = new Map<string, Plan>();

function planOf(re: UserRegex): Plan {
  const key = `${re.flags}/${re.source}`;
  let plan = plans.get(key);
  if (!plan) {
    plan = { re2: jsToRe2(re.source, re.flags) };
    if (plans.size >= PLANS_MAX) plans.clear();
    plans.set(key, plan);
  }
  return plan;
}

function re2Flags(t: Re2Translation): string {
  return `${t.ignoreCase ? 'i' : ''}${t.multiline ? 'm' : ''}${t.dotAll ? 's' : ''}`;
}

function compileRe2(plan: Plan): RE2JS | null {
  const t = plan.re2 as Re2Translation;
  try {
    plan.compiled = RE2JS.compile(
      t.pattern,
      (t.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0) |
        (t.multiline ? RE2JS.MULTILINE : 0) |
        (t.dotAll ? RE2JS.DOTALL : 0),
    );
  } catch {
    plan.compiled = null;
  }
  return plan.compiled;
}

const SURROGATE = /[\uD800-\uDFFF]/;
const NON_ASCII = /[\u0080-\uFFFF]/;
const OTHER_LINE_END = /[\r\u2028\u2029]/;

/**
 * Inputs on which both engines agree: JavaScript matches UTF-16 code units (RE2 code points), folds
 * case its own way outside ASCII, and ends lines at `\r`, U+2028 and U+2029 under `m` (RE2 only at `\n`).
 * These checks are single native scans without backtracking (linear).
 */
function re2Fits(re: UserRegex, t: Re2Translation, input: string): boolean {
  if (SURROGATE.test(input)) return false;
  if (t.ignoreCase && (NON_ASCII.test(input) || NON_ASCII.test(re.source))) return false;
  if (t.multiline && OTHER_LINE_END.test(input)) return false;
  return true;
}

// --- work on the server's thread: yield between slices -------------------------------------------

const SLICE_MS = 5;
let sliceStart = 0;

/** A loop of tests awaiting only resolved promises never lets other requests in: give them a turn. */
async function yieldIfDue(): Promise<void> {
  const now = performance.now();
  if (now - sliceStart < SLICE_MS) return;
  await nextTurn();
  sliceStart = performance.now();
}

// --- work on a worker thread ----------------------------------------------------------------------

/** Patterns that ran out of time fail at once afterwards, so a loop over many items pays the bound once. */
const timedOut = new Set<string>();
const TIMED_OUT_MAX = 1_000;

async function onWorker(
  re: UserRegex,
  job: { engine: 'js' | 're2'; source: string; flags: string; input: string },
): Promise<boolean> {
  const key = String(re);
  if (timedOut.has(key)) throw tooSlow();
  pool ??= new RegexPool(options);
  const outcome = await pool.run(job);
  switch (outcome.kind) {
    case 'result':
      return outcome.matched;
    case 'timeout':
      if (timedOut.size >= TIMED_OUT_MAX) timedOut.clear();
      timedOut.add(key);
      throw tooSlow();
    case 'memory':
      throw new UserRegexError('memory', 'The regular expression needed more memory than allowed');
    case 'error':
      throw new UserRegexError('syntax', outcome.message);
  }
}

function tooSlow(): UserRegexError {
  return new UserRegexError('timeout', `The regular expression took longer than ${options.timeoutMs} ms`);
}
