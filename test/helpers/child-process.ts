import type { ChildProcess } from 'node:child_process';

/**
 * Ends a process a test started: SIGTERM, then SIGKILL by pid after `graceMs` (a frozen server never
 * runs its SIGTERM handler). Resolves once it has exited.
 */
export async function stopChild(child: ChildProcess | undefined, graceMs = 5_000): Promise<void> {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const late = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(late);
}
