// A worker thread of the CPU pool (cpu-pool.ts): runs named functions of task modules, one call at a
// time, and posts each result back. Plain JS, so it starts without a TypeScript loader; when the server
// runs from its TypeScript sources (tests, `npm run dev`) it registers tsx first, so task modules are the
// same .ts files the main thread uses (after the build they are the compiled .js files).
//
// Messages in: `{ id, module, fn, input }`. Out: `{ id, ok: true, value }` — typed arrays at the top of
// the value, or among its own properties, are transferred rather than copied — or `{ id, ok: false, error }`.
import { parentPort, workerData } from 'node:worker_threads';

/** @type {Map<string, Promise<Record<string, unknown>>>} */
const modules = new Map();
let loader = null;

/** @param {string} href */
async function load(href) {
  let module = modules.get(href);
  if (module === undefined) {
    if (workerData?.typescript) loader ??= import('tsx/esm/api').then((api) => api.register());
    await loader;
    module = import(href);
    modules.set(href, module);
  }
  return module;
}

/** Buffers a result owns whole (never a view into a shared or pooled buffer): moved, not copied. */
function transferablesOf(value) {
  const found = new Set();
  const add = (v) => {
    if (
      ArrayBuffer.isView(v) &&
      v.buffer instanceof ArrayBuffer &&
      v.byteOffset === 0 &&
      v.byteLength === v.buffer.byteLength
    )
      found.add(v.buffer);
  };
  add(value);
  if (value !== null && typeof value === 'object' && !ArrayBuffer.isView(value))
    for (const v of Object.values(value)) add(v);
  return [...found];
}

parentPort.on('message', async ({ id, module, fn, input }) => {
  try {
    const exports = await load(module);
    const run = exports[fn];
    if (typeof run !== 'function') throw new Error(`${module} exports no function ${fn}`);
    const value = await run(input);
    parentPort.postMessage({ id, ok: true, value }, transferablesOf(value));
  } catch (error) {
    parentPort.postMessage({ id, ok: false, error: error instanceof Error ? error.message : String(error) });
  }
});
parentPort.postMessage({ ready: true });
