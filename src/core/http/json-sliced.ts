import { setImmediate as nextTurn } from 'node:timers/promises';
import { AppError } from '../errors.js';
import { assertSafeJson, MAX_JSON_DEPTH } from './json-guard.js';

/**
 * JSON.parse of a large body, in slices that leave the event loop free between them. JSON.parse is one
 * native call: 1 MB of `[{},{},…]` held the loop for ~0.5 s on a busy 2-core machine, 20 MB for seconds.
 * Here one linear pass finds the structure (matching brackets, string ends, depth), then containers
 * larger than a slice are built member by member, each member up to a slice parsed natively; the loop
 * gets a turn every few milliseconds. The result is exactly JSON.parse's (duplicate keys: the last wins;
 * `__proto__` an own property), and every slice passes the same guard as a small body.
 */

/** Bodies up to this size are parsed in one go (a few milliseconds at most). */
export const JSON_INLINE_BYTES = 256 * 1024;
/** Text parsed natively in one call. */
const SLICE_CHARS = 64 * 1024;
/** Work between two turns of the event loop. */
const SLICE_MS = 5;

interface SlicedJsonOptions {
  /** Refuse `__proto__` keys and `constructor.prototype` as Fastify's parser does (API routes). */
  refuseProto: boolean;
  /** Text parsed natively in one call (tests make it small). */
  sliceChars?: number;
}

const invalid = () => new AppError('VALIDATION_ERROR', 'The body is not valid JSON', {});

export async function parseJsonSliced(text: string, options: SlicedJsonOptions): Promise<unknown> {
  const state = { last: performance.now() };
  const tick = async () => {
    if (performance.now() - state.last < SLICE_MS) return;
    await nextTurn();
    state.last = performance.now();
  };
  const close = await scan(text, tick);
  const sliceChars = options.sliceChars ?? SLICE_CHARS;
  const parser = new Builder(text, close, options, sliceChars, tick);
  const start = skipSpace(text, 0);
  if (start >= text.length) throw invalid();
  const end = parser.valueEnd(start);
  if (skipSpace(text, end + 1) !== text.length) throw invalid();
  return parser.build(start, end, '');
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/**
 * One pass: for every `[`/`{` the index of its match, for every `"` opening a string the index of its
 * closing quote. Refuses unbalanced brackets, unterminated strings and nesting deeper than the guard's.
 */
async function scan(text: string, tick: () => Promise<void>): Promise<Int32Array> {
  const close = new Int32Array(text.length);
  const open: number[] = [];
  let i = 0;
  while (i < text.length) {
    const stop = Math.min(text.length, i + SLICE_CHARS);
    while (i < stop) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        const j = stringEnd(text, i);
        close[i] = j;
        i = j + 1;
        continue;
      }
      if (c === 0x5b || c === 0x7b) {
        open.push(i);
        if (open.length > MAX_JSON_DEPTH) {
          throw new AppError('VALIDATION_ERROR', `The body nests deeper than ${MAX_JSON_DEPTH} levels`, {
            maxDepth: MAX_JSON_DEPTH,
          });
        }
      } else if (c === 0x5d || c === 0x7d) {
        const from = open.pop();
        if (from === undefined || text.charCodeAt(from) !== c - 2) throw invalid();
        close[from] = i;
      }
      i++;
    }
    await tick();
  }
  if (open.length > 0) throw invalid();
  return close;
}

/** The closing quote of the string opening at `start`: the next quote not escaped by an odd run of backslashes. */
function stringEnd(text: string, start: number): number {
  let j = start;
  for (;;) {
    j = text.indexOf('"', j + 1);
    if (j < 0) throw invalid();
    let slashes = 0;
    while (text.charCodeAt(j - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return j;
  }
}

/** UTF-8 decoded a slice at a time; strictly (invalid bytes are a 400) unless `lenient` (U+FFFD). */
export async function decodeUtf8Sliced(bytes: Uint8Array, lenient = false): Promise<string> {
  const decoder = new TextDecoder('utf-8', { fatal: !lenient, ignoreBOM: lenient });
  const parts: string[] = [];
  const step = 1024 * 1024;
  try {
    for (let at = 0; at < bytes.length; at += step) {
      parts.push(decoder.decode(bytes.subarray(at, at + step), { stream: at + step < bytes.length }));
      await nextTurn();
    }
  } catch {
    throw new AppError('VALIDATION_ERROR', 'The body is not valid UTF-8');
  }
  return parts.join('');
}

interface Member {
  keyStart: number;
  keyEnd: number;
  start: number;
  end: number;
}

const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));

class Builder {
  constructor(
    private readonly text: string,
    private readonly close: Int32Array,
    private readonly options: SlicedJsonOptions,
    private readonly sliceChars: number,
    private readonly tick: () => Promise<void>,
  ) {}

  /** Index of the last character of the value starting at `start`. */
  valueEnd(start: number): number {
    const c = this.text.charCodeAt(start);
    if (c === 0x5b || c === 0x7b || c === 0x22) return this.close[start] as number;
    let i = start;
    while (i < this.text.length) {
      const d = this.text.charCodeAt(i);
      if (d === 0x2c || d === 0x5d || d === 0x7d || isSpace(d)) break;
      i++;
    }
    if (i === start) throw invalid();
    return i - 1;
  }

  async build(start: number, end: number, path: string): Promise<unknown> {
    const c = this.text.charCodeAt(start);
    if (end - start < this.sliceChars || (c !== 0x5b && c !== 0x7b)) {
      const value = this.native(start, end);
      this.guard(value, path);
      await this.tick();
      return value;
    }
    return c === 0x5b ? this.array(start, end, path) : this.object(start, end, path);
  }

  private native(start: number, end: number): unknown {
    try {
      return JSON.parse(this.text.slice(start, end + 1));
    } catch {
      throw invalid();
    }
  }

  /** The guard of small bodies, on one slice; a problem is reported under the slice's own path. */
  private guard(value: unknown, path: string, rename: (first: string) => string = (f) => f): void {
    try {
      assertSafeJson(value);
    } catch (err) {
      const details = (err as AppError).details as { fields?: Array<{ field: string }> } | undefined;
      for (const f of details?.fields ?? []) {
        const [, first = '', rest = ''] = /^body\.?([^.]*)(.*)$/.exec(f.field) ?? [];
        const inner = first === '' ? '' : `${rename(first)}${rest}`;
        f.field = ['body', path, inner].filter((part) => part !== '').join('.');
      }
      throw err;
    }
    if (this.options.refuseProto) refuseProto(value);
  }

  /**
   * The members of a container, each `[start, end]` of its value (and of its key in an object), one at
   * a time. Runs of small members are parsed together, one native call per slice; a large container
   * member is built on its own, recursively.
   */
  private *members(start: number, end: number, keyed: boolean): Generator<Member> {
    let i = skipSpace(this.text, start + 1);
    if (i === end) return;
    for (;;) {
      let keyStart = i;
      let keyEnd = i;
      if (keyed) {
        if (this.text.charCodeAt(i) !== 0x22) throw invalid();
        keyStart = i;
        keyEnd = this.close[i] as number;
        i = skipSpace(this.text, keyEnd + 1);
        if (this.text.charCodeAt(i) !== 0x3a) throw invalid();
        i = skipSpace(this.text, i + 1);
      }
      const last = this.valueEnd(i);
      yield { keyStart, keyEnd, start: i, end: last };
      i = skipSpace(this.text, last + 1);
      const sep = this.text.charCodeAt(i);
      if (i === end && sep === (keyed ? 0x7d : 0x5d)) return;
      if (sep !== 0x2c) throw invalid();
      i = skipSpace(this.text, i + 1);
      if (i >= end) throw invalid();
    }
  }

  private isLarge(m: Member): boolean {
    const c = this.text.charCodeAt(m.start);
    return m.end - m.start >= this.sliceChars && (c === 0x5b || c === 0x7b);
  }

  private async array(start: number, end: number, path: string): Promise<unknown[]> {
    const out: unknown[] = [];
    /** The pending run of small members: from its first member's start to its last's end. */
    let from = -1;
    let to = -1;
    const flush = async () => {
      if (from < 0) return;
      const base = out.length;
      const batch = this.nativeWrapped('[', from, to, ']') as unknown[];
      this.guard(batch, path, (first) => String(Number(first) + base));
      for (const v of batch) out.push(v);
      from = -1;
      await this.tick();
    };
    for (const m of this.members(start, end, false)) {
      if (this.isLarge(m)) {
        await flush();
        out.push(await this.build(m.start, m.end, join(path, out.length)));
        continue;
      }
      if (from >= 0 && m.end - from >= this.sliceChars) await flush();
      if (from < 0) from = m.start;
      to = m.end;
    }
    await flush();
    return out;
  }

  private async object(start: number, end: number, path: string): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    // As JSON.parse: `__proto__` is an own property, not the prototype; a repeated key keeps its place.
    const set = (key: string, value: unknown) => {
      // The members' own contents were checked as slices; here only this level's key.
      if (this.options.refuseProto && isProtoMember(key, value)) throw forbidden();
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    };
    let from = -1;
    let to = -1;
    const flush = async () => {
      if (from < 0) return;
      const batch = this.nativeWrapped('{', from, to, '}') as Record<string, unknown>;
      this.guard(batch, path);
      for (const key of Object.keys(batch)) set(key, batch[key]);
      from = -1;
      await this.tick();
    };
    for (const m of this.members(start, end, true)) {
      if (this.isLarge(m)) {
        await flush();
        const name = this.native(m.keyStart, m.keyEnd) as string;
        if (name.includes('\u0000')) this.guard({ [name]: null }, path);
        set(name, await this.build(m.start, m.end, join(path, name)));
        continue;
      }
      if (from >= 0 && m.end - from >= this.sliceChars) await flush();
      if (from < 0) from = m.keyStart;
      to = m.end;
    }
    await flush();
    return out;
  }

  private nativeWrapped(open: string, start: number, end: number, close: string): unknown {
    try {
      return JSON.parse(`${open}${this.text.slice(start, end + 1)}${close}`);
    } catch {
      throw invalid();
    }
  }
}

const isProtoMember = (key: string, value: unknown) =>
  key === '__proto__' ||
  (key === 'constructor' && value !== null && typeof value === 'object' && Object.hasOwn(value, 'prototype'));

/** Fastify's (secure-json-parse) refusals, for bodies it did not parse itself. */
export function refuseProto(value: unknown): void {
  const stack = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    for (const key in node) {
      const child = (node as Record<string, unknown>)[key];
      if (isProtoMember(key, child)) throw forbidden();
      if (child !== null && typeof child === 'object') stack.push(child);
    }
  }
}

const PROTO_REFUSAL = 'Object contains forbidden prototype property';
const forbidden = () => new AppError('VALIDATION_ERROR', PROTO_REFUSAL);

/**
 * Fastify's parser (secure-json-parse) refuses the same keys with a SyntaxError of this message, which
 * the error handler would answer as "Malformed JSON body": as ours instead, whatever the body's size.
 */
export function protoRefusalOf(error: Error): AppError | null {
  return error instanceof SyntaxError && error.message === PROTO_REFUSAL ? forbidden() : null;
}
