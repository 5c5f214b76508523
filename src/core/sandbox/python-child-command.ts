import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type NetworkIsolation, networkIsolation, withoutNetwork } from './network-namespace.js';
import { withDataLimit } from './process-memory.js';

const CHILD_URL = new URL('./python-child.mjs', import.meta.url);
/** Node 22+ names the permission model `--permission`; Node 20 `--experimental-permission`. */
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission')
  ? '--permission'
  : '--experimental-permission';

export interface PythonChildCommand {
  /** What to spawn: the network namespace's `unshare` where available, else Node itself. */
  command: string;
  args: string[];
  /** The child's script, Node's flags for it, and Pyodide's entry module (for the tests' probes). */
  script: string;
  execArgv: string[];
  pyodideEntry: string;
  network: NetworkIsolation;
  /** Whether the process runs under an OS data limit (RLIMIT_DATA, via prlimit). */
  dataLimited: boolean;
}

/**
 * Private writable memory a child may map beyond its WebAssembly cap (RLIMIT_DATA). Measured: an
 * interpreter that has loaded maps ~225 MiB (VmData; its RSS is ~150-170 MiB), a run that grows the
 * WebAssembly memory to its cap adds that cap. Loading peaks higher while V8 compiles Pyodide's
 * WebAssembly (its compiler's zones): with 320 MiB every load failed on Node 24 (V8 aborts, SIGTRAP) and
 * some on a busy Node 20, so the bound keeps ample room; the resident-memory watch is the tighter one.
 */
export const DATA_OVERHEAD_MB = 768;

/**
 * How an interpreter's process is started: with `memoryMb` given, under an OS data limit of
 * `memoryMb + DATA_OVERHEAD_MB` where prlimit is available (process-memory.ts: an allocation past it
 * fails, whatever JavaScript Python reaches), in a network namespace of its own where the OS offers one
 * (network-namespace.ts), Node with the permission model (it may read only its own file and Pyodide's;
 * no child processes, workers or addons) and a JavaScript heap cap, running python-child.mjs.
 */
export function pythonChildCommand(memoryMb?: number): PythonChildCommand {
  const script = realpathSync(fileURLToPath(CHILD_URL));
  const pyodideDir = dirname(realpathSync(createRequire(import.meta.url).resolve('pyodide')));
  const execArgv = [
    PERMISSION_FLAG,
    `--allow-fs-read=${script}`,
    `--allow-fs-read=${pyodideDir}${sep}`,
    '--max-old-space-size=128',
    '--no-warnings',
  ];
  const isolated = withoutNetwork(process.execPath, [...execArgv, script]);
  const { command, args, limited } =
    memoryMb === undefined
      ? { ...isolated, limited: false }
      : withDataLimit(isolated.command, isolated.args, (memoryMb + DATA_OVERHEAD_MB) * 1024 * 1024);
  return {
    command,
    args,
    dataLimited: limited,
    script,
    execArgv,
    pyodideEntry: join(pyodideDir, 'pyodide.mjs'),
    network: networkIsolation(),
  };
}
