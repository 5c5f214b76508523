import { readFileSync } from 'node:fs';
import { onPath } from './network-namespace.js';

/**
 * Memory bounds on a child process, set and read at the OS level (Linux): what the child's own code
 * cannot lift or dodge, whatever JavaScript it reaches.
 */

/** A process's resident memory in MiB (VmRSS of /proc/<pid>/status); null where it cannot be read (not Linux, gone). */
export function residentMb(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/**
 * `command` and `args` started under util-linux's `prlimit --data` (RLIMIT_DATA: the private writable
 * memory the process may map, heap and ArrayBuffers included; V8's PROT_NONE reservations for
 * WebAssembly are not counted until made writable), when `prlimit` is on the PATH; as they are otherwise.
 * prlimit sets the limit on itself and execs the command, so the pid stays the command's.
 */
export function withDataLimit(
  command: string,
  args: readonly string[],
  bytes: number,
  pathVariable = process.env.PATH ?? '/usr/bin:/bin',
): { command: string; args: string[]; limited: boolean } {
  if (process.platform !== 'linux') return { command, args: [...args], limited: false };
  // Looked up per start (a few access() calls): no cache to go stale.
  const prlimit = onPath('prlimit', pathVariable);
  if (!prlimit) return { command, args: [...args], limited: false };
  return { command: prlimit, args: [`--data=${bytes}`, '--', command, ...args], limited: true };
}
