import { MAX_JSON_DEPTH } from '../../../core/http/json-guard.js';
import type { SandboxPool } from '../../../core/sandbox/sandbox-pool.js';
import { expressionSandbox } from './expression-sandbox.js';
import type { Item, Json } from './types.js';

/**
 * Expressions in node parameters: a string starting with `=` holding `{{ … }}` parts, each a JSONata
 * expression. They never run on the server's V8 heap or event loop: JSONata itself runs inside a QuickJS
 * isolate on a worker thread (expression-sandbox.ts), where a deadline bounds CPU time even inside
 * built-in functions (the worker is terminated if one does not yield), an allocator limit bounds memory,
 * and regular expressions are QuickJS's, interrupted by the same deadline. The bindings are plain JSON
 * data plus `$now()` returning a string.
 */

export interface ExpressionData {
  json: Record<string, Json>;
  /** Name → `{ json }` of that node's first output item. */
  node: Record<string, { json: Record<string, Json> }>;
  workflow: { id: string; name: string };
  execution: { id: string; mode: string; resumeUrl: string };
  env: Record<string, string>;
  now: Date;
}

export class ExpressionError extends Error {
  readonly expression: string;
  constructor(expression: string, message: string) {
    super(`Expression ${JSON.stringify(truncate(expression, 120))} failed: ${message}`);
    this.name = 'ExpressionError';
    this.expression = expression;
  }
}

export const isExpression = (value: unknown): value is string =>
  typeof value === 'string' && value.startsWith('=') && value.includes('{{');

/** True if the value holds an expression anywhere inside. */
export function containsExpression(value: unknown): boolean {
  if (isExpression(value)) return true;
  if (Array.isArray(value)) return value.some(containsExpression);
  if (value !== null && typeof value === 'object') return Object.values(value).some(containsExpression);
  return false;
}

const MAX_STACK = 300;
const MAX_SEQUENCE = 1_000_000;
const MAX_RESULT_CHARS = 5_000_000;

interface Part {
  literal: string;
  code: string | null;
}

type GuestAnswer =
  | { ok: true; values: Array<{ v?: unknown }> }
  | { ok: false; index: number; message: string };

/**
 * Evaluates expressions in the QuickJS sandbox (see expression-sandbox.ts): one sandbox call per node
 * parameters and item, bounded by `timeoutMs` of CPU and the sandbox's memory limit.
 */
export class ExpressionEvaluator {
  constructor(
    private readonly timeoutMs: number,
    /** The sandbox queues per tenant and serves tenants in turn. */
    private readonly tenant = 'default',
    private readonly sandbox: Pick<SandboxPool, 'call'> = expressionSandbox(),
  ) {}

  /** Resolves every expression inside `value` (objects and arrays walked), leaving the rest as is. */
  async resolve(value: unknown, data: ExpressionData): Promise<unknown> {
    const sources: string[] = [];
    collect(value, sources);
    const values = sources.length === 0 ? [] : await this.evaluateAll(sources, data);
    let next = 0;
    const rebuild = (v: unknown): unknown => {
      if (typeof v === 'string') return isExpression(v) ? values[next++] : v;
      if (Array.isArray(v)) return v.map(rebuild);
      if (v !== null && typeof v === 'object') {
        const out: Record<string, unknown> = {};
        for (const [k, x] of Object.entries(v)) out[k] = rebuild(x);
        return out;
      }
      return v;
    };
    return rebuild(value);
  }

  /** Evaluates one expression string (`={{ … }}` or a template `=text {{ … }} text`). */
  async evaluate(source: string, data: ExpressionData): Promise<unknown> {
    return (await this.evaluateAll([source], data))[0];
  }

  private async evaluateAll(sources: string[], data: ExpressionData): Promise<unknown[]> {
    const expressions = sources.map((s) =>
      splitTemplate(s.slice(1)).map((p) => ({
        ...p,
        code: p.code === null ? null : rewriteNodeAccess(p.code),
      })),
    );
    const direct = readDirectly(expressions, data.json);
    if (direct) return direct;
    // `$node` holds every earlier node's first item: send it only to expressions that read it.
    const needsNodes = sources.some((s) => s.includes('$node'));
    const request = JSON.stringify({
      expressions,
      data: {
        json: data.json,
        node: needsNodes ? data.node : {},
        workflow: data.workflow,
        execution: data.execution,
        env: data.env,
        now: data.now.toISOString(),
      },
      limits: {
        timeoutMs: this.timeoutMs,
        stack: MAX_STACK,
        sequence: MAX_SEQUENCE,
        resultChars: MAX_RESULT_CHARS,
        depth: MAX_JSON_DEPTH,
      },
    });
    let answer: GuestAnswer;
    try {
      answer = JSON.parse(
        await this.sandbox.call('evaluateExpressions', request, this.timeoutMs, this.tenant),
      ) as GuestAnswer;
    } catch (err) {
      const what = sources.length === 1 ? (sources[0] as string) : sources.join(' ');
      throw new ExpressionError(what, messageOf(err));
    }
    if (!answer.ok) throw new ExpressionError(sources[answer.index] ?? '', answer.message);
    return answer.values.map((x) => x.v);
  }
}

/** `$json.a.b` with plain names only: the common case, read on the host without running any code. */
const FIELD_PATH = /^\s*\$json((?:\.[A-Za-z_][A-Za-z0-9_]*)+)\s*$/;

/**
 * The values of expressions that are all plain `$json` field paths landing on a string, number,
 * boolean, null, or a missing field — what JSONata answers for them too — or null when any part needs
 * JSONata (arrays map and flatten in JSONata, so a path through or onto an array goes to the sandbox).
 * Reading own properties of parsed JSON runs no user code, so it needs no sandbox; it saves a worker
 * round trip on most webhook workflows.
 */
function readDirectly(expressions: Part[][], json: Record<string, Json>): unknown[] | null {
  const read = (code: string): { value: unknown } | null => {
    const match = FIELD_PATH.exec(code);
    if (!match) return null;
    let cur: unknown = json;
    for (const name of (match[1] as string).slice(1).split('.')) {
      if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return null;
      cur = Object.hasOwn(cur, name) ? (cur as Record<string, unknown>)[name] : undefined;
      if (cur === undefined) return { value: undefined };
    }
    return cur !== null && typeof cur === 'object' ? null : { value: cur };
  };
  const values: unknown[] = [];
  for (const parts of expressions) {
    const only = parts[0];
    if (parts.length === 1 && only && only.literal.trim() === '' && only.code !== null) {
      const got = read(only.code);
      if (!got) return null;
      values.push(got.value);
      continue;
    }
    let text = '';
    for (const part of parts) {
      text += part.literal;
      if (part.code === null) continue;
      const got = read(part.code);
      if (!got) return null;
      text += got.value === undefined || got.value === null ? '' : String(got.value);
    }
    values.push(text);
  }
  return values;
}

function collect(value: unknown, into: string[]): void {
  if (typeof value === 'string') {
    if (isExpression(value)) into.push(value);
  } else if (Array.isArray(value)) {
    for (const v of value) collect(v, into);
  } else if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) collect(v, into);
  }
}

/** Splits `a {{ x }} b {{ y }}` into literal/code parts; trailing text is a last part without code. */
function splitTemplate(text: string): Part[] {
  const parts: Part[] = [];
  let rest = text;
  for (;;) {
    const open = rest.indexOf('{{');
    if (open < 0) break;
    const close = rest.indexOf('}}', open + 2);
    if (close < 0) break;
    parts.push({ literal: rest.slice(0, open), code: rest.slice(open + 2, close) });
    rest = rest.slice(close + 2);
  }
  if (rest !== '' || parts.length === 0) parts.push({ literal: rest, code: null });
  return parts;
}

/** n8n's `$node["Name"]` → JSONata's `$node.`Name`` (a JSONata `[…]` would be a filter). */
function rewriteNodeAccess(code: string): string {
  return code.replace(
    /\$node\[\s*(["'])((?:(?!\1)[^`\\])*)\1\s*\]/g,
    (_m, _q, name: string) => `$node.\`${name}\``,
  );
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (err !== null && typeof err === 'object' && 'message' in err) return String(err.message);
  return String(err);
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/** The expression data for item `index` of a node's input. */
export function expressionData(
  base: Omit<ExpressionData, 'json'>,
  items: Item[],
  index: number,
): ExpressionData {
  return { ...base, json: items[index]?.json ?? {} };
}
