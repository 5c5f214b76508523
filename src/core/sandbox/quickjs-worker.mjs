// @ts-check
// A worker thread that hosts one QuickJS (WebAssembly) runtime for the sandbox pool. User text never runs
// on V8 here either: V8 only relays strings in and out of QuickJS, whose heap lives in the module's own
// linear memory under a hard limit, and whose interpreter polls a deadline while it runs. Built-in
// functions that loop in C without polling are bounded by the pool, which terminates this thread.
// Every execution gets a pristine realm: the whole QuickJS heap (WebAssembly linear memory) is copied
// right after the guest scripts load, and copied back before a call of another execution (`realm`) runs,
// so nothing one execution leaves in the guest (built-ins, hidden intrinsics, module state, caches,
// pending jobs) exists for the next one. See docs/decisions.md, "Sandbox isolation".
// Plain JavaScript (not TypeScript): a worker file must load as is, both from src/ in tests and from dist/.
import { createHash, randomFillSync } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, newVariant } from 'quickjs-emscripten-core';

/** @typedef {{ name: string, code: string, module?: boolean }} GuestScript */
/** @typedef {{ scripts: GuestScript[], memoryBytes: number, stackBytes: number }} WorkerOptions (memory: the whole WebAssembly heap) */
/** @typedef {{ id: number, fn: string, arg: string, timeoutMs: number, realm: string | null }} Call (realm: whose state the call may share; null: none) */

const options = /** @type {WorkerOptions} */ (workerData);
const port = parentPort;
if (!port) throw new Error('quickjs-worker runs as a worker thread');

// The memory bound is the WebAssembly memory's own maximum: QuickJS's allocator limit does not count
// block sizes in its WebAssembly build, so it would let a 100 MB string through. At the maximum, malloc
// fails and QuickJS throws "out of memory" in the guest. 16 MiB is the module's declared minimum.
const PAGE = 64 * 1024;
// `WebAssembly` is a Node global that the ES2023 lib without DOM does not declare.
const { Memory, RuntimeError } = /** @type {any} */ (globalThis).WebAssembly;
const wasmMemory = new Memory({
  initial: (16 * 1024 * 1024) / PAGE,
  maximum: Math.max(16 * 1024 * 1024, options.memoryBytes) / PAGE,
});
// The package's typings describe its CommonJS shape; the ESM default export is the variant itself.
const quickjs = await newQuickJSWASMModuleFromVariant(
  newVariant(/** @type {any} */ (variant), { wasmMemory }),
);

/** @type {{ runtime: import('quickjs-emscripten-core').QuickJSRuntime, context: import('quickjs-emscripten-core').QuickJSContext } | null} */
let vm = null;
/** The linear memory as it was right after the guest scripts loaded (the pristine realm). */
let pristine = new Uint8Array(0);
/**
 * Whose state the guest heap holds now: null while pristine, else the realm of the call that last ran
 * (a fresh token for a call that shares with nobody, or after a limit).
 * @type {string | symbol | null}
 */
let heldBy = null;
/**
 * Set when a WebAssembly trap (e.g. a host answer that no longer fits in the guest heap) unwound through
 * QuickJS. The trap leaves the WebAssembly stack pointer, a global outside the linear memory, wherever it
 * happened, and restoring the memory does not reset it: each such trap would shrink the stack left for
 * every later call of every account. The call fails and the pool replaces this worker.
 */
let broken = false;
/** Most characters of text a byte conversion takes or returns: larger data fails the call, not the worker. */
const MAX_HOST_TEXT = 8 * 1024 * 1024;
/** Most characters of an error message sent back to the pool (it reaches logs and execution records). */
const MAX_MESSAGE = 2_000;

// QuickJS has no Intl. Guests get one host function that formats with Node's Intl: it takes and returns
// only strings and numbers, so no host object ever reaches the guest (guest scripts wrap it as `Intl`).
const MAX_INTL_ARG = 2_000;
/** @type {Map<string, any>} */
const formatters = new Map();

/** @param {string} kind @param {string} locale @param {string} optionsJson @param {number} value */
function hostIntl(kind, locale, optionsJson, value) {
  if (locale.length > MAX_INTL_ARG || optionsJson.length > MAX_INTL_ARG)
    throw new RangeError('Intl arguments are too long');
  const key = `${kind}\u0000${locale}\u0000${optionsJson}`;
  let formatter = formatters.get(key);
  if (!formatter) {
    const opts = optionsJson ? JSON.parse(optionsJson) : undefined;
    const locales = locale === '' ? undefined : locale;
    formatter = kind.startsWith('number')
      ? new Intl.NumberFormat(locales, opts)
      : new Intl.DateTimeFormat(locales, opts);
    if (formatters.size > 500) formatters.clear();
    formatters.set(key, formatter);
  }
  switch (kind) {
    case 'number-format':
      return formatter.format(value);
    case 'number-resolved':
    case 'date-resolved':
      return JSON.stringify(formatter.resolvedOptions());
    case 'date-format':
      return formatter.format(new Date(value));
    case 'date-parts':
      return JSON.stringify(formatter.formatToParts(new Date(value)));
    default:
      throw new RangeError(`unknown Intl call ${kind}`);
  }
}

/**
 * Defines `globalThis[name]` as a host function. An error thrown by `body` fails the guest's call with its
 * message; a WebAssembly trap marks the worker broken instead (nothing more may run in that runtime: the
 * interrupt handler stops the guest at once) and answers undefined rather than touch the runtime again.
 * @param {import('quickjs-emscripten-core').QuickJSContext} context
 * @param {string} name
 * @param {(...args: any[]) => any} body
 */
function defineHost(context, name, body) {
  const fn = context.newFunction(name, (...args) => {
    if (broken) return undefined;
    try {
      return body(...args);
    } catch (error) {
      if (error instanceof RuntimeError) {
        broken = true;
        return undefined;
      }
      try {
        return { error: context.newError(bounded(describe(error))) };
      } catch {
        broken = true;
        return undefined;
      }
    }
  });
  context.setProp(context.global, name, fn);
  fn.dispose();
}

/**
 * A guest value as the host sees it. quickjs-emscripten copies a string out as UTF-8 inside the guest
 * heap and reads a failed copy (the heap full) as '': an empty answer for a non-empty string is that.
 * @param {import('quickjs-emscripten-core').QuickJSContext} context
 * @param {import('quickjs-emscripten-core').QuickJSHandle} handle
 */
function guestValue(context, handle) {
  const value = context.dump(handle);
  if (value === '' && context.typeof(handle) === 'string') {
    const length = context.getProp(handle, 'length');
    const size = context.getNumber(length);
    length.dispose();
    if (size > 0) throw new RangeError('the text does not fit in the sandbox memory');
  }
  return value;
}

/** A string for the guest: refuses one larger than any byte conversion may answer. @param {string} text */
function hostText(text) {
  if (text.length > MAX_HOST_TEXT) throw new RangeError('the data is too large for this conversion');
  return text;
}

/** @param {import('quickjs-emscripten-core').QuickJSContext} context */
function defineHostFunctions(context) {
  defineHost(context, '__hostIntl', (...args) => {
    const [kind, locale, opts, value] = args.map((h) => guestValue(context, h));
    if (
      typeof kind !== 'string' ||
      typeof locale !== 'string' ||
      typeof opts !== 'string' ||
      typeof value !== 'number'
    )
      throw new TypeError('bad Intl call');
    return context.newString(hostIntl(kind, locale, opts, value));
  });
  // Digests of text (UTF-8) in hex: QuickJS has no crypto, and a JavaScript MD5/SHA would be slow here.
  defineHost(context, '__hostHash', (algorithmHandle, textHandle) => {
    const algorithm = context.dump(algorithmHandle);
    const text = guestValue(context, textHandle);
    if (typeof text !== 'string' || !HASHES.has(algorithm)) throw new TypeError('bad hash call');
    return context.newString(createHash(algorithm).update(text, 'utf8').digest('hex'));
  });
  // Byte conversions for the guest's small Buffer, btoa and atob: strings and numbers in and out, at most
  // MAX_HOST_TEXT characters each way (the worker's V8 heap and the guest's would not hold much more).
  defineHost(context, '__hostBytes', (opHandle, encodingHandle, textHandle) => {
    const op = context.dump(opHandle);
    const encoding = context.dump(encodingHandle);
    const text = guestValue(context, textHandle);
    if (typeof text !== 'string' || !BYTE_ENCODINGS.has(encoding)) throw new TypeError('bad bytes call');
    const result = hostBytes(op, encoding, hostText(text));
    return typeof result === 'number' ? context.newNumber(result) : context.newString(hostText(result));
  });
  // Math.random from the host: a restored heap would otherwise replay QuickJS's own generator state,
  // the same numbers in every execution (guest/harden.js installs it as Math.random). Not V8's own
  // Math.random: its xorshift128+ state is shared by every call on this worker and linear, so a few
  // hundred draws of one account give it away, and with it the next account's numbers.
  defineHost(context, '__hostRandom', () => context.newNumber(secureRandom()));
}

/** Random words from the operating system's generator, drawn 2 KiB at a time. */
const randomWords = new Uint32Array(512);
let randomNext = randomWords.length;

/** A double in [0, 1) with 53 random bits from a CSPRNG. */
function secureRandom() {
  if (randomNext >= randomWords.length) {
    randomFillSync(randomWords);
    randomNext = 0;
  }
  const high = /** @type {number} */ (randomWords[randomNext++]) >>> 5;
  const low = /** @type {number} */ (randomWords[randomNext++]) >>> 6;
  return (high * 67108864 + low) / 9007199254740992;
}

const BYTE_ENCODINGS = new Set([
  'utf8',
  'utf-8',
  'base64',
  'base64url',
  'hex',
  'latin1',
  'binary',
  'ascii',
  'utf16le',
]);

/**
 * @param {string} op
 * @param {BufferEncoding} encoding
 * @param {string} text
 * @returns {string | number}
 */
function hostBytes(op, encoding, text) {
  switch (op) {
    case 'from':
      return Buffer.from(text, encoding).toString('base64');
    case 'fromBytes':
      return bytesOf(text).toString('base64');
    case 'concat':
      return concatBase64(text).toString('base64');
    case 'length':
      return Buffer.from(text, 'base64').length;
    case 'toString':
      return Buffer.from(text, 'base64').toString(encoding);
    case 'bytes':
      // A typed array's own join: no array of millions of numbers on the worker's V8 heap.
      return Buffer.from(text, 'base64').join(',');
    case 'btoa':
      return btoa(text);
    case 'atob':
      return atob(text);
    default:
      throw new TypeError('bad bytes call');
  }
}

// Both parse their comma-separated input in place: splitting millions of parts into an array would run
// the worker's V8 heap out of memory (it is terminated then) long before the text limit.

/** Bytes from "12,0,255" (decimal, as the guest's Buffer writes them; anything else counts as 0). @param {string} text */
function bytesOf(text) {
  if (text === '') return Buffer.alloc(0);
  let count = 1;
  for (let i = text.indexOf(','); i >= 0; i = text.indexOf(',', i + 1)) count++;
  const out = Buffer.alloc(count);
  let start = 0;
  for (let k = 0; k < count; k++) {
    const end = k === count - 1 ? text.length : text.indexOf(',', start);
    out[k] = Number(text.slice(start, end)) & 255;
    start = end + 1;
  }
  return out;
}

/** The bytes of comma-separated base64 parts, one after another. @param {string} text */
function concatBase64(text) {
  let size = 0;
  for (let start = 0; start <= text.length; ) {
    const comma = text.indexOf(',', start);
    const end = comma < 0 ? text.length : comma;
    size += Buffer.byteLength(text.slice(start, end), 'base64');
    start = end + 1;
  }
  const out = Buffer.alloc(size);
  let offset = 0;
  for (let start = 0; start <= text.length; ) {
    const comma = text.indexOf(',', start);
    const end = comma < 0 ? text.length : comma;
    offset += out.write(text.slice(start, end), offset, 'base64');
    start = end + 1;
  }
  return out.subarray(0, offset);
}

const HASHES = new Set(['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512', 'sha3-512']);

/** A fresh runtime with the guest scripts loaded; after a limit is hit the old one is thrown away. */
function open() {
  const runtime = quickjs.newRuntime({ maxStackSizeBytes: options.stackBytes });
  const context = runtime.newContext();
  defineHostFunctions(context);
  for (const script of options.scripts) {
    const result = context.evalCode(script.code, script.name, { type: script.module ? 'module' : 'global' });
    if (result.error) {
      const message = describe(context.dump(result.error));
      result.error.dispose();
      throw new Error(`guest script ${script.name} failed to load: ${message}`);
    }
    result.value.dispose();
  }
  // A script may start work (a warm-up evaluation) that settles in the job queue.
  const jobs = runtime.executePendingJobs();
  if (jobs.error) jobs.error.dispose();
  // Every handle the host keeps across calls (the global object, host functions) exists by now, so
  // restoring these bytes never frees memory a live host handle points to.
  // Only up to the last byte in use (plus a page): memory above it is zero and lies beyond the
  // allocator's top chunk, whose header is the heap's last non-zero word, so nothing there is allocated.
  const memory = new Uint8Array(wasmMemory.buffer);
  let used = memory.length;
  while (used > 0 && memory[used - 1] === 0) used--;
  pristine = memory.slice(0, Math.min(memory.length, (Math.ceil(used / PAGE) + 1) * PAGE));
  heldBy = null;
  return { runtime, context };
}

/**
 * Puts the guest heap back as it was after loading: QuickJS's whole state (objects, atoms, the job
 * queue, allocator) lives in linear memory, so this is a fresh realm. Memory grown since stays allocated
 * (WebAssembly memory never shrinks) but unused: the allocator's own state is restored with the rest.
 * Everything above the copy is zeroed as it was at loading: malloc hands that memory out again, and
 * no read of an uninitialised byte (none is known in QuickJS) may find the previous execution's data.
 * Under a millisecond for a 64 MiB heap.
 */
function restore() {
  const memory = new Uint8Array(wasmMemory.buffer);
  memory.set(pristine);
  memory.fill(0, pristine.length);
  heldBy = null;
}

/** @param {unknown} error */
function describe(error) {
  if (error && typeof error === 'object' && 'message' in error) return String(error.message);
  // QuickJS throws null when it cannot allocate even the error object; the guest scripts catch what
  // user code throws, so a null reaching here is the heap at its bound (it came back as "null").
  if (error === null) return 'out of memory (the sandbox could not allocate the error)';
  return String(error);
}

/** At most MAX_MESSAGE characters of `message`. @param {string} message */
function bounded(message) {
  return message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message;
}

/** @param {string} message */
function limitOf(message) {
  if (/^interrupted$/i.test(message)) return 'time';
  if (/out of memory/i.test(message)) return 'memory';
  if (/stack overflow/i.test(message)) return 'stack';
  return null;
}

/**
 * Calls `globalThis[fn](arg)` in the guest: it returns a string, or a promise of one, which is settled
 * by running the guest's job queue under the same deadline.
 * @param {Call} call
 */
function run(call) {
  if (broken) return { id: call.id, ok: false, error: 'the sandbox failed', limit: 'crash' };
  vm ??= open();
  if (heldBy !== null && (call.realm === null || call.realm !== heldBy)) restore();
  heldBy = call.realm ?? Symbol('unshared');
  const { runtime, context } = vm;
  const deadline = Date.now() + call.timeoutMs;
  runtime.setInterruptHandler(() => broken || Date.now() > deadline);
  let failure = null;
  let value = null;
  try {
    const fn = context.getProp(context.global, call.fn);
    const arg = context.newString(call.arg);
    const result = context.callFunction(fn, context.undefined, arg);
    fn.dispose();
    arg.dispose();
    if (result.error) {
      failure = describe(context.dump(result.error));
      result.error.dispose();
    } else {
      const handle = result.value;
      for (;;) {
        const state = context.getPromiseState(handle);
        if (state.type === 'fulfilled') {
          try {
            value = guestValue(context, state.value);
          } catch {
            // The answer did not fit beside the heap's contents to be copied out.
            failure = 'out of memory';
          }
          if (!state.notAPromise) state.value.dispose();
          break;
        }
        if (state.type === 'rejected') {
          failure = describe(context.dump(state.error));
          state.error.dispose();
          break;
        }
        const jobs = runtime.executePendingJobs();
        if (jobs.error) {
          failure = describe(context.dump(jobs.error));
          jobs.error.dispose();
          break;
        }
        if (jobs.value === 0 && context.getPromiseState(handle).type === 'pending') {
          failure = 'the guest function did not settle';
          break;
        }
      }
      handle.dispose();
    }
  } catch {
    // Only the runtime itself throws here (the guest's errors come back as handles): a trap, or a state
    // no later call can trust.
    broken = true;
  } finally {
    try {
      runtime.removeInterruptHandler();
    } catch {
      broken = true;
    }
  }
  if (broken) {
    heldBy = Symbol('broken');
    // A trap is most often an allocation that failed on the host's side of a call, the heap being full.
    const error = 'the sandbox failed during this call (most likely out of memory) and was restarted';
    return { id: call.id, ok: false, error, limit: 'crash' };
  }
  if (failure !== null) {
    failure = bounded(failure);
    // An interrupt inside a promise job can leave the chain unsettled instead of rejected.
    const limit = limitOf(failure) ?? (Date.now() > deadline ? 'time' : null);
    // A limit can leave the heap half-built (never freed: that trips QuickJS's own assertions); the next
    // call starts from the pristine copy instead, whatever its realm. The pool ends the worker after a
    // memory limit, to give its grown memory back.
    if (limit) heldBy = Symbol('limit');
    return { id: call.id, ok: false, error: failure, limit };
  }
  if (typeof value !== 'string')
    return { id: call.id, ok: false, error: 'the guest returned no string', limit: null };
  return { id: call.id, ok: true, value };
}

vm = open();
port.on('message', (/** @type {Call} */ call) => port.postMessage(run(call)));
port.postMessage({ ready: true });
