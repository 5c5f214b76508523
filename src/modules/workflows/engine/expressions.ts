import { createRequire } from 'node:module';
import jsonata from 'jsonata';
import type { RE2JS as RE2JSClass } from 're2js';
import { MAX_JSON_DEPTH } from '../../../core/http/json-depth.js';
import type { Item, Json } from './types.js';

/**
 * Expressions in node parameters: a string starting with `=` holding `{{ … }}` parts, each a JSONata
 * expression. JSONata is data-only (no property reaches a prototype, nothing reaches the process); on
 * top of that every evaluation runs under a time limit, a stack-depth limit and a sequence-size limit,
 * regular expressions run on RE2 (linear time: a native regex cannot be interrupted, and one
 * backtracking pattern would hold the whole process), and the bindings are plain JSON data plus
 * `$now()` returning a string.
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
const CACHE_MAX = 2_000;

// Loaded on the first regex (JSONata builds them synchronously): most processes never need it.
let re2: typeof RE2JSClass | undefined;
const loadRe2 = (): typeof RE2JSClass =>
  (re2 ??= (createRequire(import.meta.url)('re2js') as { RE2JS: typeof RE2JSClass }).RE2JS);

/**
 * JSONata builds its regexes through this (`RegexEngine`): the `exec`/`lastIndex` protocol of a
 * global RegExp, answered by RE2, whose matching time is linear in the input whatever the pattern.
 * Backreferences and lookaheads have no linear-time form; such a pattern is refused when built.
 */
class LinearRegExp {
  lastIndex = 0;
  private readonly pattern: RE2JSClass;

  constructor(re: RegExp) {
    const RE2JS = loadRe2();
    let flags = 0;
    if (re.flags.includes('i')) flags |= RE2JS.CASE_INSENSITIVE;
    if (re.flags.includes('m')) flags |= RE2JS.MULTILINE;
    if (re.flags.includes('s')) flags |= RE2JS.DOTALL;
    try {
      this.pattern = RE2JS.compile(RE2JS.translateRegExp(re.source), flags);
    } catch (err) {
      throw new Error(`regular expression /${re.source}/ is not supported: ${messageOf(err)}`);
    }
  }

  exec(input: string): RegExpExecArray | null {
    const matcher = this.pattern.matcher(input);
    if (this.lastIndex > input.length || !matcher.find(this.lastIndex)) {
      this.lastIndex = 0;
      return null;
    }
    const groups: string[] = [];
    for (let i = 0; i <= matcher.groupCount(); i++) groups.push(matcher.group(i) as string);
    this.lastIndex = matcher.end();
    return Object.assign(groups, { index: matcher.start(), input }) as unknown as RegExpExecArray;
  }
}

interface Part {
  literal: string;
  code: string | null;
}

type Compiled =
  | { whole: jsonata.Expression }
  | { parts: Array<{ literal: string; expr: jsonata.Expression | null }> };

export class ExpressionEvaluator {
  private readonly cache = new Map<string, Compiled>();

  constructor(private readonly timeoutMs: number) {}

  /** Resolves every expression inside `value` (objects and arrays walked), leaving the rest as is. */
  async resolve(value: unknown, data: ExpressionData): Promise<unknown> {
    if (typeof value === 'string') return isExpression(value) ? this.evaluate(value, data) : value;
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      for (const v of value) out.push(await this.resolve(v, data));
      return out;
    }
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = await this.resolve(v, data);
      return out;
    }
    return value;
  }

  /** Evaluates one expression string (`={{ … }}` or a template `=text {{ … }} text`). */
  async evaluate(source: string, data: ExpressionData): Promise<unknown> {
    const compiled = this.compile(source);
    const bindings = bindingsOf(data);
    if ('whole' in compiled) return this.run(source, compiled.whole, bindings);
    let text = '';
    for (const part of compiled.parts) {
      text += part.literal;
      if (part.expr) text += stringify(await this.run(source, part.expr, bindings));
    }
    return text;
  }

  private async run(source: string, expr: jsonata.Expression, bindings: Record<string, unknown>) {
    let result: unknown;
    try {
      result = await expr.evaluate(bindings.json, bindings);
    } catch (err) {
      throw new ExpressionError(source, messageOf(err));
    }
    return toJson(source, result);
  }

  private compile(source: string): Compiled {
    const hit = this.cache.get(source);
    if (hit) return hit;
    const parts = splitTemplate(source.slice(1));
    const options = {
      timeout: this.timeoutMs,
      stack: MAX_STACK,
      sequence: MAX_SEQUENCE,
      RegexEngine: LinearRegExp,
    };
    const build = (code: string) => {
      try {
        return jsonata(rewriteNodeAccess(code), options as unknown as jsonata.JsonataOptions);
      } catch (err) {
        throw new ExpressionError(source, messageOf(err));
      }
    };
    const only = parts[0];
    const compiled: Compiled =
      parts.length === 1 && only && only.literal.trim() === '' && only.code !== null
        ? { whole: build(only.code) }
        : { parts: parts.map((p) => ({ literal: p.literal, expr: p.code === null ? null : build(p.code) })) };
    if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(source, compiled);
    return compiled;
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

function bindingsOf(data: ExpressionData): Record<string, unknown> {
  const nowIso = data.now.toISOString();
  return {
    json: data.json,
    node: data.node,
    workflow: data.workflow,
    execution: data.execution,
    env: data.env,
    // Returns a string only: nothing callable or host-made leaks into expressions.
    now: () => nowIso,
  };
}

/** Copies a JSONata result into plain JSON; functions and non-JSON values become errors. */
function toJson(source: string, value: unknown): unknown {
  let size = 0;
  const copy = (v: unknown, depth = 0): unknown => {
    if (v === undefined || v === null || typeof v === 'boolean') return v;
    if (typeof v === 'number') return Number.isFinite(v) ? v : null;
    if (typeof v === 'string') {
      size += v.length;
      if (size > MAX_RESULT_CHARS) throw new ExpressionError(source, 'result is too large');
      return v;
    }
    if (typeof v === 'object' && depth >= MAX_JSON_DEPTH)
      throw new ExpressionError(source, `result nests deeper than ${MAX_JSON_DEPTH} levels`);
    if (Array.isArray(v)) {
      const out = v.map((x) => copy(x, depth + 1)).filter((x) => x !== undefined);
      return out;
    }
    if (typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v))) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        const c = copy(x, depth + 1);
        if (c !== undefined) out[k] = c;
      }
      return out;
    }
    if (v instanceof Date) return v.toISOString();
    throw new ExpressionError(source, `result of type ${typeof v} is not JSON data`);
  };
  return copy(value);
}

function stringify(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
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
