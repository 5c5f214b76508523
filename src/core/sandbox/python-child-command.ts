import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type NetworkIsolation, networkIsolation, withoutNetwork } from './network-namespace.js';

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
}

/**
 * How an interpreter's process is started: in a network namespace of its own where the OS offers one
 * (network-namespace.ts), Node with the permission model (it may read only its own file and Pyodide's;
 * no child processes, workers or addons) and a JavaScript heap cap, running python-child.mjs.
 */
export function pythonChildCommand(): PythonChildCommand {
  const script = realpathSync(fileURLToPath(CHILD_URL));
  const pyodideDir = dirname(realpathSync(createRequire(import.meta.url).resolve('pyodide')));
  const execArgv = [
    PERMISSION_FLAG,
    `--allow-fs-read=${script}`,
    `--allow-fs-read=${pyodideDir}${sep}`,
    '--max-old-space-size=128',
    '--no-warnings',
  ];
  const { command, args } = withoutNetwork(process.execPath, [...execArgv, script]);
  return {
    command,
    args,
    script,
    execArgv,
    pyodideEntry: join(pyodideDir, 'pyodide.mjs'),
    network: networkIsolation(),
  };
}
