import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';

export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface CommandBounds {
  timeoutMs: number;
  maxOutputBytes: number;
  cwd?: string | undefined;
}

/** Why a command was stopped before it ended on its own. */
export class CommandStopped extends Error {}

/**
 * Runs `command` with /bin/sh in a process group of its own, bounded: past `timeoutMs`, or once stdout
 * or stderr passes `maxOutputBytes`, the whole group is killed (SIGKILL to -pid), so children it
 * started die with it. The environment is minimal: the server's own variables (database URLs,
 * secrets) are not the command's to read.
 */
export function runCommand(command: string, bounds: CommandBounds): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], {
      cwd: bounds.cwd ?? tmpdir(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', HOME: bounds.cwd ?? tmpdir() },
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let stopped: string | null = null;
    const kill = (why: string) => {
      if (stopped) return;
      stopped = why;
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(
      () => kill(`The command ran longer than ${bounds.timeoutMs} ms and was stopped`),
      bounds.timeoutMs,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > bounds.maxOutputBytes)
        kill(`The command's output passed ${bounds.maxOutputBytes} bytes; it was stopped`);
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      errBytes += chunk.length;
      if (errBytes > bounds.maxOutputBytes)
        kill(`The command's error output passed ${bounds.maxOutputBytes} bytes; it was stopped`);
      else err.push(chunk);
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (stopped) {
        reject(new CommandStopped(stopped));
        return;
      }
      resolve({
        exitCode: code ?? (signal ? 128 : 1),
        stdout: Buffer.concat(out).toString('utf8').trim(),
        stderr: Buffer.concat(err).toString('utf8').trim(),
      });
    });
  });
}
