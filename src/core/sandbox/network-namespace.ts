import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * An OS-level network block for a child process, where the OS offers one without privileges: on Linux,
 * util-linux's `unshare --user --net` starts the command in a new user namespace (no uid mapped: the
 * command keeps no capability after exec) and a new network namespace, which holds only a loopback
 * interface that is down. No packet leaves it: TCP and UDP to any address (the host's 127.0.0.1 included)
 * fail with ENETUNREACH, and so does every DNS query; abstract Unix sockets are per namespace too. The
 * parent's IPC channel (a socket pair inherited at spawn) is not a network and keeps working.
 *
 * What it does not cover: Unix sockets bound to a path in the filesystem (another layer, the child's own
 * JavaScript refusal of sockets, covers those), and names in /etc/hosts, which resolve without a network.
 */

export type NetworkIsolation =
  | { available: true; command: string; args: readonly string[] }
  | { available: false; reason: string };

let probed: NetworkIsolation | undefined;

/** How to start a command without a network, probed once per process (a ~10 ms `unshare … true`). */
export function networkIsolation(): NetworkIsolation {
  probed ??= probeNetworkIsolation();
  return probed;
}

/** `command` and `args` prefixed with the isolation when it is available; as they are otherwise. */
export function withoutNetwork(
  command: string,
  args: readonly string[],
): { command: string; args: string[] } {
  const isolation = networkIsolation();
  if (!isolation.available) return { command, args: [...args] };
  return { command: isolation.command, args: [...isolation.args, command, ...args] };
}

/** Checks that `unshare --user --net` works here, looking for it on `pathVariable` (a PATH). */
export function probeNetworkIsolation(pathVariable = process.env.PATH ?? '/usr/bin:/bin'): NetworkIsolation {
  if (process.platform !== 'linux')
    return { available: false, reason: `no unprivileged network namespaces on ${process.platform}` };
  const unshare = onPath('unshare', pathVariable);
  if (!unshare) return { available: false, reason: 'util-linux `unshare` is not installed' };
  const args = ['--user', '--net', '--'];
  const check = onPath('true', pathVariable);
  if (!check) return { available: false, reason: '`true` is not on the PATH to check `unshare` with' };
  const result = spawnSync(unshare, [...args, check], { stdio: 'ignore', timeout: 5_000, env: {} });
  if (result.error) return { available: false, reason: `unshare failed: ${result.error.message}` };
  if (result.status !== 0)
    return {
      available: false,
      reason: `unshare --user --net is refused here (exit ${result.status ?? result.signal}): user namespaces are off or restricted`,
    };
  return { available: true, command: unshare, args };
}

/** The absolute path of an executable on the server's PATH (the child's environment is empty). */
export function onPath(name: string, pathVariable: string): string | null {
  for (const dir of pathVariable.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return null;
}
