// One CPython interpreter (Pyodide, CPython on WebAssembly) in a child process of its own, for
// python-pool.ts, which starts it under Node's permission model (file reads limited to this file and
// Pyodide's own files; no child processes, no workers, no native addons) with an empty environment.
// It answers the pool's `{ init: { memoryBytes, maxOutputChars, prelude, pyodideUrl } }` with `{ ready: true }`
// once loaded, then each `{ id, program, input }` with `{ id, ok, output, logs, pending }`: `prelude` and then
// `program` run in a fresh globals dict holding `__input__` (a string); the program leaves its answer in
// `__output__`. Once the run's microtasks have run, `{ settled: id, pending }` tells the pool what the run
// left scheduled (an asyncio task, a callback, a timer): anything, and the pool replaces this process.
//
// The process is the boundary (what Python could reach through Pyodide's JavaScript objects is what this
// process may do); inside it, layers more:
// - The permission model refuses reading any file but Pyodide's and this one, writing any, spawning
//   (os.system goes through node:child_process), workers and process.binding. The network, which the
//   permission model does not cover, is cut by the OS where it can (the pool starts this process in a
//   network namespace of its own on Linux: network-namespace.ts) and here, before Pyodide loads: no
//   fetch/WebSocket globals, every socket (net, tls, http, dgram, and fetch's undici under them)
//   refuses to connect or listen, and every name resolution (dns, dns.promises, their Resolvers) fails.
// - Python's `js` module is an empty object (`jsglobals`); the `js`/`pyodide_js` modules are unregistered,
//   Pyodide's own Python modules dropped from sys.modules and refused by an import hook and an audit hook.
// - Code generation from strings is off once loaded (Function constructors throw, no eval).
// - Memory: the WebAssembly memory may not grow past `memoryBytes` (Python raises MemoryError); the pool
//   caps the JavaScript heap (--max-old-space-size) and kills the process at the deadline.
import dgram from 'node:dgram';
import dns from 'node:dns';
import { constants as fsConstants } from 'node:fs';
import Module from 'node:module';
import net from 'node:net';
import { constants as osConstants } from 'node:os';
import { dirname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const refuseNetwork = () => {
  throw new Error('the network is not available in the Python sandbox');
};
for (const key of ['fetch', 'WebSocket', 'EventSource', 'XMLHttpRequest', 'Request', 'Response'])
  delete globalThis[key];
net.Socket.prototype.connect = refuseNetwork;
net.Server.prototype.listen = refuseNetwork;
dgram.Socket.prototype.bind = refuseNetwork;
dgram.Socket.prototype.send = refuseNetwork;
dgram.Socket.prototype.connect = refuseNetwork;
const refuseResolution = () => {
  throw new Error('name resolution is not available in the Python sandbox');
};
// The Resolver classes' methods first (instances made earlier share them), then every function of both
// modules, the classes included.
for (const Resolver of [dns.Resolver, dns.promises.Resolver]) {
  for (const key of Object.getOwnPropertyNames(Resolver.prototype)) {
    if (key !== 'constructor' && typeof Resolver.prototype[key] === 'function')
      Resolver.prototype[key] = refuseResolution;
  }
}
for (const holder of [dns, dns.promises]) {
  for (const key of Object.keys(holder))
    if (typeof holder[key] === 'function') holder[key] = refuseResolution;
}
// ESM imports of these modules (`import { lookup } from 'node:dns'`) see the refusals too.
Module.syncBuiltinESMExports();
// Emscripten reads fs constants through process.binding, which the permission model refuses.
try {
  Object.defineProperty(process, 'binding', {
    value: (name) => {
      if (name === 'constants') return { fs: fsConstants, os: osConstants };
      throw new Error(`process.binding('${name}') is not available in the Python sandbox`);
    },
    configurable: false,
    writable: false,
  });
} catch {}
// The pool gone (the server stopped or crashed): so is this interpreter.
process.on('disconnect', () => process.exit(0));

const send = process.send.bind(process);
// Held before anything runs: what the run-end check below relies on.
const activeResources = process.getActiveResourcesInfo.bind(process);
const afterMicrotasks = setImmediate;
const { memoryBytes, maxOutputChars, prelude, pyodideUrl } = await new Promise((resolve) =>
  process.once('message', (message) => resolve(message.init)),
);
const { loadPyodide } = await import(pyodideUrl);

const grow = WebAssembly.Memory.prototype.grow;
WebAssembly.Memory.prototype.grow = function growWithin(pages) {
  if (this.buffer.byteLength + pages * 65_536 > memoryBytes) throw new RangeError('memory limit reached');
  return grow.call(this, pages);
};

let logs = [];
const LOG_LINES = 200;
const LOG_CHARS = 2_000;
const write = (level) => (line) => {
  if (logs.length >= LOG_LINES) return;
  logs.push({ level, message: line.length > LOG_CHARS ? `${line.slice(0, LOG_CHARS)}…` : line });
};

const py = await loadPyodide({
  // Where Pyodide's files are, named (its own guess reads a stack trace, which loaders may rewrite).
  indexURL: `${dirname(fileURLToPath(pyodideUrl))}${sep}`,
  jsglobals: Object.create(null),
  env: { HOME: '/home/pyodide', _: '/usr/bin/python' },
  stdout: write('log'),
  stderr: write('error'),
});
py.setStdout({ batched: write('log') });
py.setStderr({ batched: write('error') });

// From here on, the thread loads no module: what Pyodide needs is loaded; the rest is the host.
Module._load = function refused(request) {
  throw new Error(`'${request}' is not available in the Python sandbox`);
};
delete globalThis.require;

py.unregisterJsModule('js');
py.unregisterJsModule('pyodide_js');
py.runPython(`
import sys
def _confine():
    blocked = ('js', 'pyodide_js', 'pyodide', '_pyodide', '_pyodide_core', 'micropip')
    # The modules go below, but their objects stay reachable through gc: what holds the JavaScript API
    # (the loaders of the js/pyodide_js modules, the finder's registry) lets go of it first.
    import gc
    for o in gc.get_objects():
        kind = type(o)
        if kind.__module__ == '_pyodide._importhook':
            if kind.__name__ == 'JsLoader':
                o.jsproxy = None
            elif kind.__name__ == 'JsFinder':
                o.jsproxies.clear()
    loader = sys.modules.get('pyodide._package_loader')
    if loader is not None:
        loader.loadedPackages = None
    for name in list(sys.modules):
        if name.split('.')[0] in blocked:
            del sys.modules[name]
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__module__.split('.')[0] not in blocked]
    class Refuse:
        @staticmethod
        def find_spec(name, path=None, target=None):
            top = name.split('.')[0]
            if top == 'micropip':
                raise ImportError(f"No module named '{name}': packages cannot be installed here (standard library only)")
            if top in blocked:
                raise ImportError(f"No module named '{name}': this sandbox has no JavaScript bridge")
            return None
    sys.meta_path.insert(0, Refuse)
    # An audit hook cannot be removed from Python: the same refusal holds should the import hook go.
    def audit(event, args):
        if event == 'import' and isinstance(args[0], str):
            Refuse.find_spec(args[0])
    sys.addaudithook(audit)
    import os, posix
    def system(command):
        raise PermissionError('os.system is not available in this sandbox')
    os.system = posix.system = system
_confine()
del _confine
`);

// No JavaScript from strings in this thread from now on (Pyodide has loaded; it does not need it to run).
const refuse = function codeGenerationRefused() {
  throw new TypeError('code generation from strings is not allowed here');
};
for (const F of [
  Function,
  (async () => {}).constructor,
  function* () {}.constructor,
  async function* () {}.constructor,
]) {
  Object.defineProperty(F.prototype, 'constructor', { value: refuse, writable: false, configurable: false });
}
globalThis.eval = refuse;
// Nor network clients in the thread's global object (Pyodide needs none once loaded).
for (const key of ['fetch', 'WebSocket', 'EventSource', 'XMLHttpRequest']) delete globalThis[key];
for (const key of [
  'binding',
  '_linkedBinding',
  'dlopen',
  'kill',
  'getBuiltinModule',
  'chdir',
  'setuid',
  'setgid',
  'seteuid',
  'setegid',
  'setgroups',
  'initgroups',
  'umask',
  'execve',
  'loadEnvFile',
  'mainModule',
  'report',
  'permission',
  'openStdin',
  'send',
]) {
  try {
    delete process[key];
  } catch {}
}
for (const holder of [py, py.FS, py.FS?.filesystems, py._module, py._module?.FS?.filesystems]) {
  if (!holder) continue;
  for (const key of ['NODEFS', 'mountNodeFS', 'mountNativeFS', 'loadPackage', 'loadPackagesFromImports']) {
    try {
      delete holder[key];
    } catch {}
  }
}

const dict = py.globals.get('dict');
const builtins = py.pyimport('builtins');
// Modules a run imports are dropped after it, so the next run imports them afresh.
const reset = py.runPython(`
import sys
_baseline = set(sys.modules)
def _reset():
    for name in [n for n in sys.modules if n not in _baseline]:
        del sys.modules[name]
_reset
`);

// What is scheduled while this process is idle (the IPC channel…): a run leaving more has left work behind.
let baseline = new Map();
const countKinds = () => {
  const counts = new Map();
  for (const kind of activeResources()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
};
const pendingWork = () => {
  const pending = [];
  for (const [kind, count] of countKinds()) {
    for (let extra = count - (baseline.get(kind) ?? 0); extra > 0 && pending.length < 20; extra--)
      pending.push(kind);
  }
  return pending;
};

process.on('message', ({ id, program, input }) => {
  logs = [];
  const globals = dict();
  let answer;
  try {
    globals.set('__builtins__', builtins);
    globals.set('__name__', '__main__');
    globals.set('__input__', input);
    py.runPython(prelude, { globals });
    py.runPython(program, { globals });
    const output = globals.get('__output__');
    answer =
      typeof output === 'string' && output.length > maxOutputChars
        ? {
            id,
            ok: false,
            error: `the answer has more than ${maxOutputChars} characters`,
            logs,
            oversize: true,
          }
        : { id, ok: true, output: typeof output === 'string' ? output : null, logs, pending: pendingWork() };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // The prelude answers Python's own exceptions: what reaches here is the interpreter failing
    // (a stack overflow in WebAssembly…), so the pool replaces this worker.
    answer = { id, ok: false, error: message.slice(0, 2_000), logs, broken: true };
  } finally {
    try {
      globals.clear();
      globals.destroy();
      reset();
    } catch {}
  }
  send(answer);
  // A callback the run scheduled through a promise shows once its microtask has run; a callback that
  // never ends keeps this from being sent at all, and the pool ends the process when it does not come.
  afterMicrotasks(() => send({ settled: id, pending: pendingWork() }));
});
afterMicrotasks(() => {
  baseline = countKinds();
  send({ ready: true });
});
