import { MAX_JSON_DEPTH } from '../../../core/http/json-guard.js';
import type { CallScope, SandboxPool } from '../../../core/sandbox/sandbox-pool.js';
import { binaryMetadata } from './binary.js';
import { defaultTimezone, expressionSandbox } from './expression-sandbox.js';
import type { Item, Json } from './types.js';

/**
 * Expressions in node parameters: a string starting with `=` holding `{{ … }}` parts. By default each part
 * is n8n's JavaScript expression language ($json, $input, $('Node'), $now, n8n's data-transformation
 * methods); a workflow may choose JSONata instead (`settings.expressionLanguage: 'jsonata'`). Neither
 * runs on the server's V8 heap or event loop: both run inside a QuickJS isolate on a worker thread
 * (expression-sandbox.ts), where a deadline bounds CPU time even inside built-in functions (the worker is
 * terminated if one does not yield), an allocator limit bounds memory, regular expressions are
 * QuickJS's, interrupted by the same deadline, every built-in is frozen (guest/harden.js), and each
 * execution starts from a pristine guest heap, so no execution sees what another one left behind or holds
 * (the calls carry the account and the execution: sandbox-pool.ts). The Code node's JavaScript runs there too.
 */

export type ExpressionLanguage = 'javascript' | 'jsonata';
export const EXPRESSION_LANGUAGES: readonly ExpressionLanguage[] = ['javascript', 'jsonata'];

/** What `$('Name')` and `$node["Name"]` read of a node that ran: its latest run. */
export interface NodeSnapshot {
  items: Item[];
  params: Record<string, unknown>;
  runIndex: number;
  /**
   * The node's context values that are not lists or objects (`$node["Loop Over Items"].context
   * ["noItemsLeft"]`, read by the guest's `$node`).
   */
  context?: Record<string, string | number | boolean | null>;
}

export interface ExpressionData {
  json: Record<string, Json>;
  /** Name → `{ json }` of that node's first output item (JSONata's `$node`). */
  node: Record<string, { json: Record<string, Json> }>;
  /** The node that ran, by name, for `$('Name')` (JavaScript); read only for the names an expression uses. */
  nodeSnapshot?: (name: string) => NodeSnapshot | undefined;
  /** The item of a node that input item `index` comes from by pairedItem lineage (`$('Name').item`). */
  pairedItem?: (name: string, index: number) => Item | undefined;
  /** Every node name of the workflow (to tell "doesn't exist" from "hasn't run"). */
  nodeNames?: readonly string[];
  /** The current node's input items (`$input`) and the item being resolved. */
  input?: Item[];
  itemIndex?: number;
  runIndex?: number;
  prevNode?: { name: string; outputIndex: number; runIndex: number };
  /** The current node's parameters as written (`$parameter`). */
  params?: Record<string, unknown>;
  workflow: { id: string; name: string; active?: boolean };
  execution: { id: string; mode: string; resumeUrl: string };
  env: Record<string, string>;
  vars?: Record<string, string>;
  now: Date;
  /**
   * IANA zone of expression dates — `$now`, `$today`, Luxon's local time (`DateTime.local()`,
   * `toDateTime()`): the workflow's `settings.timezone`; else the instance's (`GENERIC_TIMEZONE`, UTC).
   */
  timezone?: string;
  language?: ExpressionLanguage;
  /** Extra variables for this evaluation only (`$response`, `$pageCount`, `$request`). */
  extra?: Record<string, unknown>;
}

export class ExpressionError extends Error {
  readonly expression: string;
  constructor(expression: string, message: string) {
    super(`Expression ${JSON.stringify(truncate(expression, 120))} failed: ${message}`);
    this.name = 'ExpressionError';
    this.expression = expression;
  }
}

/** n8n's rule: a parameter string starting with `=` is an expression (`=3,14` is the text `3,14`). */
export const isExpression = (value: unknown): value is string =>
  typeof value === 'string' && value.startsWith('=');

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

/** Bounds of one Code node run, besides the sandbox's memory. */
export interface CodeLimits {
  timeoutMs: number;
}

export interface CodeRun {
  items: Item[];
  logs: Array<{ level: string; message: string }>;
}

export class CodeError extends Error {
  constructor(
    message: string,
    readonly logs: CodeRun['logs'],
    readonly itemIndex: number | undefined,
  ) {
    super(message);
    this.name = 'CodeError';
  }
}

/**
 * Evaluates expressions in the QuickJS sandbox (see expression-sandbox.ts): one sandbox call per node
 * parameters and item, bounded by `timeoutMs` of CPU and the sandbox's memory limit.
 */
export class ExpressionEvaluator {
  constructor(
    private readonly timeoutMs: number,
    /** Whose expressions these are (the account): the sandbox queues, serves and caps per tenant. */
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

  /** Runs a Code node's JavaScript over its input items ("run once for all items" or "for each item"). */
  async runCode(
    code: string,
    mode: 'runOnceForAllItems' | 'runOnceForEachItem',
    data: ExpressionData,
    limits: CodeLimits,
  ): Promise<CodeRun> {
    const request = JSON.stringify({
      code,
      mode,
      data: guestData(data, [code], true),
      limits: { ...resultLimits(), logLines: MAX_LOG_LINES, logChars: MAX_LOG_CHARS },
    });
    let answer:
      | { ok: true; items: Item[]; logs: CodeRun['logs'] }
      | {
          ok: false;
          message: string;
          logs: CodeRun['logs'];
          itemIndex?: number;
        };
    try {
      answer = JSON.parse(await this.sandbox.call('runCode', request, limits.timeoutMs, this.scopeOf(data)));
    } catch (err) {
      throw new CodeError(messageOf(err), [], undefined);
    }
    if (!answer.ok) throw new CodeError(answer.message, answer.logs, answer.itemIndex);
    return { items: answer.items, logs: answer.logs };
  }

  /**
   * Whose the call is, and which calls may share its guest state: those of the same execution only
   * (an evaluation outside one, e.g. a webhook's dedupe key, shares with none).
   */
  private scopeOf(data: ExpressionData): CallScope {
    const id = data.execution.id;
    return { tenant: this.tenant, realm: id ? `${this.tenant}\u0000${id}` : null };
  }

  private async evaluateAll(sources: string[], data: ExpressionData): Promise<unknown[]> {
    const language = data.language ?? 'javascript';
    const expressions = sources.map((s) =>
      splitTemplate(s.slice(1)).map((p) => ({
        ...p,
        code: p.code === null || language !== 'jsonata' ? p.code : rewriteNodeAccess(p.code),
      })),
    );
    const direct = readDirectly(expressions, data.json, language);
    if (direct) return direct;
    const request =
      language === 'jsonata'
        ? JSON.stringify({
            expressions,
            data: {
              json: data.json,
              // `$node` holds every earlier node's first item: send it only to expressions that read it.
              node: sources.some((s) => s.includes('$node')) ? data.node : {},
              workflow: data.workflow,
              execution: data.execution,
              env: data.env,
              now: data.now.toISOString(),
            },
            limits: {
              timeoutMs: this.timeoutMs,
              stack: MAX_STACK,
              sequence: MAX_SEQUENCE,
              ...resultLimits(),
            },
          })
        : JSON.stringify({ expressions, data: guestData(data, sources, false), limits: resultLimits() });
    let answer: GuestAnswer;
    try {
      answer = JSON.parse(
        await this.sandbox.call(
          language === 'jsonata' ? 'evaluateExpressions' : 'evaluateN8n',
          request,
          this.timeoutMs,
          this.scopeOf(data),
        ),
      ) as GuestAnswer;
    } catch (err) {
      const what = sources.length === 1 ? (sources[0] as string) : sources.join(' ');
      throw new ExpressionError(what, messageOf(err));
    }
    if (!answer.ok) throw new ExpressionError(sources[answer.index] ?? '', answer.message);
    return answer.values.map((x) => x.v);
  }
}

const MAX_LOG_LINES = 200;
const MAX_LOG_CHARS = 2_000;

const resultLimits = () => ({ resultChars: MAX_RESULT_CHARS, depth: MAX_JSON_DEPTH });

const NODE_REFERENCE =
  /\$\(\s*(['"`])((?:(?!\1)[^\\])*)\1\s*\)|\$node\[\s*(['"`])((?:(?!\3)[^\\])*)\3\s*\]|\$node\.([A-Za-z_$][\w$]*)/g;
const ANY_NODE_ACCESS = /\$\(|\$node\b|\$items\s*\(/g;

/**
 * The data a JavaScript evaluation needs, and no more: items of the nodes its text names (all nodes when a
 * name is computed), the input items only when it reads `$input`/`$items`/`items`.
 */
export function guestData(data: ExpressionData, sources: string[], code: boolean) {
  const text = sources.join('\n');
  const nodes: Record<string, NodeSnapshot> = {};
  if (data.nodeSnapshot) {
    const named = new Set<string>();
    let references = 0;
    for (const m of text.matchAll(NODE_REFERENCE)) {
      references++;
      named.add((m[2] ?? m[4] ?? m[5]) as string);
    }
    const accesses = [...text.matchAll(ANY_NODE_ACCESS)].length;
    const names = accesses > references ? (data.nodeNames ?? []) : [...named];
    for (const name of names) {
      const snapshot = data.nodeSnapshot(name);
      if (snapshot) nodes[name] = snapshot;
    }
  }
  // `$evaluateExpression(text, itemIndex)` may read another input item.
  const wantsInput = code || /\$input|\$items|\$evaluateExpression/.test(text);
  const input = data.input ?? [{ json: data.json }];
  // `$('Name').item` by lineage: the current item's (an expression) or every input item's (code).
  const paired: Record<string, Record<number, Item>> = {};
  if (data.pairedItem) {
    const indices = code ? input.map((_, i) => i) : [data.itemIndex ?? 0];
    for (const name of Object.keys(nodes)) {
      const byIndex: Record<number, Item> = {};
      for (const i of indices) {
        const item = data.pairedItem(name, i);
        if (item)
          byIndex[i] = item.binary
            ? { json: item.json, binary: binaryMetadata(item.binary) as Item['binary'] }
            : { json: item.json };
      }
      paired[name] = byIndex;
    }
  }
  return {
    paired,
    json: data.json,
    // The Code node gets the bytes (it may read or make files); an expression sees metadata only.
    input: wantsInput ? (code ? input : withoutBytes(input)) : undefined,
    binary: /\$binary/.test(text) ? binaryMetadata(input[data.itemIndex ?? 0]?.binary) : undefined,
    itemIndex: data.itemIndex ?? 0,
    runIndex: data.runIndex ?? 0,
    prevNode: data.prevNode,
    params: data.params,
    nodes,
    allNodes: data.nodeNames,
    workflow: data.workflow,
    execution: data.execution,
    env: data.env,
    vars: data.vars ?? {},
    now: data.now.toISOString(),
    timezone: data.timezone ?? defaultTimezone(),
    extra: data.extra,
  };
}

/** `$json.a.b` with plain names only: the common case, read on the host without running any code. */
const FIELD_PATH = /^\s*\$json((?:\.[A-Za-z_][A-Za-z0-9_]*)+)\s*$/;

/**
 * The values of expressions that are all plain `$json` field paths, or null when any part needs the
 * sandbox. Reading own properties of parsed JSON runs no user code, so it needs no sandbox; it saves a
 * worker round trip on most webhook workflows. In JavaScript a path may land on anything (a copy is
 * returned); in JSONata a path through or onto an array maps and flattens, so it goes to the sandbox.
 */
function readDirectly(
  expressions: Part[][],
  json: Record<string, Json>,
  language: ExpressionLanguage,
): unknown[] | null {
  const read = (code: string): { value: unknown } | null => {
    const match = FIELD_PATH.exec(code);
    if (!match) return null;
    let cur: unknown = json;
    const names = (match[1] as string).slice(1).split('.');
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return null;
      cur = Object.hasOwn(cur, name) ? (cur as Record<string, unknown>)[name] : undefined;
      // Reading through undefined throws a TypeError, which n8n's evaluator turns into undefined.
      if (cur === undefined) return { value: undefined };
    }
    if (cur === null || typeof cur !== 'object') return { value: cur };
    return language === 'javascript' ? { value: structuredClone(cur) } : null;
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
      if (got.value !== null && typeof got.value === 'object') return null;
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

/**
 * Splits `a {{ x }} b {{ y }}` into literal/code parts; trailing text is a last part without code. A part
 * ends at the first `}}` outside string literals and outside braces the code opened, so object literals
 * (`{{ {a: {b: 1}} }}`) and strings holding `}}` stay whole.
 */
function splitTemplate(text: string): Part[] {
  const parts: Part[] = [];
  let rest = text;
  for (;;) {
    const open = rest.indexOf('{{');
    if (open < 0) break;
    const close = closingOf(rest, open + 2);
    if (close < 0) break;
    parts.push({ literal: rest.slice(0, open), code: rest.slice(open + 2, close) });
    rest = rest.slice(close + 2);
  }
  if (rest !== '' || parts.length === 0) parts.push({ literal: rest, code: null });
  return parts;
}

/** Index of the `}}` closing code that starts at `from`, or -1. */
function closingOf(text: string, from: number): number {
  let depth = 0;
  let quote = '';
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '{') depth++;
    else if (c === '}') {
      if (depth === 0 && text[i + 1] === '}') return i;
      if (depth > 0) depth--;
    }
  }
  // An unbalanced brace or quote: fall back to the first `}}`, as n8n's own splitter does.
  return text.indexOf('}}', from);
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

/** Items with their binary properties' metadata instead of their bytes (the same list when none has any). */
function withoutBytes(items: Item[]): Item[] {
  if (!items.some((i) => i.binary)) return items;
  return items.map((i) => (i.binary ? { ...i, binary: binaryMetadata(i.binary) as Item['binary'] } : i));
}

/** The expression data for item `index` of a node's input. */
export function expressionData(
  base: Omit<ExpressionData, 'json'>,
  items: Item[],
  index: number,
): ExpressionData {
  return { ...base, json: items[index]?.json ?? {} };
}
