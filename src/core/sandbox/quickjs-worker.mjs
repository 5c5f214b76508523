// @ts-check
// A worker thread that hosts one QuickJS (WebAssembly) runtime for the sandbox pool. User text never runs
// on V8 here either: V8 only relays strings in and out of QuickJS, whose heap lives in the module's own
// linear memory under a hard limit, and whose interpreter polls a deadline while it runs. Built-in
// functions that loop in C without polling are bounded by the pool, which terminates this thread.
// Plain JavaScript (not TypeScript): a worker file must load as is, both from src/ in tests and from dist/.
import { parentPort, workerData } from 'node:worker_threads';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, newVariant } from 'quickjs-emscripten-core';

/** @typedef {{ name: string, code: string, module?: boolean }} GuestScript */
/** @typedef {{ scripts: GuestScript[], memoryBytes: number, stackBytes: number }} WorkerOptions (memory: the whole WebAssembly heap) */
/** @typedef {{ id: number, fn: string, arg: string, timeoutMs: number }} Call */

const options = /** @type {WorkerOptions} */ (workerData);
const port = parentPort;
if (!port) throw new Error('quickjs-worker runs as a worker thread');

// The memory bound is the WebAssembly memory's own maximum: QuickJS's allocator limit does not count
// block sizes in its WebAssembly build, so it would let a 100 MB string through. At the maximum, malloc
// fails and QuickJS throws "out of memory" in the guest. 16 MiB is the module's declared minimum.
const PAGE = 64 * 1024;
// `WebAssembly` is a Node global that the ES2023 lib without DOM does not declare.
const { Memory } = /** @type {any} */ (globalThis).WebAssembly;
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

/** A fresh runtime with the guest scripts loaded; after a limit is hit the old one is thrown away. */
function open() {
  const runtime = quickjs.newRuntime({ maxStackSizeBytes: options.stackBytes });
  const context = runtime.newContext();
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
  return { runtime, context };
}

function close() {
  if (!vm) return;
  try {
    vm.context.dispose();
    vm.runtime.dispose();
  } catch {
    // A runtime that ran out of memory may not free cleanly; the whole heap is dropped with it anyway.
  }
  vm = null;
}

/** @param {unknown} error */
function describe(error) {
  if (error && typeof error === 'object' && 'message' in error) return String(error.message);
  return String(error);
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
  vm ??= open();
  const { runtime, context } = vm;
  const deadline = Date.now() + call.timeoutMs;
  runtime.setInterruptHandler(() => Date.now() > deadline);
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
          value = context.dump(state.value);
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
  } catch (error) {
    failure = describe(error);
  } finally {
    runtime.removeInterruptHandler();
  }
  if (failure !== null) {
    // An interrupt inside a promise job can leave the chain unsettled instead of rejected.
    const limit = limitOf(failure) ?? (Date.now() > deadline ? 'time' : null);
    // A limit can leave the heap half-built: start the next call on a clean runtime.
    if (limit) close();
    return { id: call.id, ok: false, error: failure, limit };
  }
  if (typeof value !== 'string')
    return { id: call.id, ok: false, error: 'the guest returned no string', limit: null };
  return { id: call.id, ok: true, value };
}

vm = open();
port.on('message', (/** @type {Call} */ call) => port.postMessage(run(call)));
port.postMessage({ ready: true });
