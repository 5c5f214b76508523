import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { freePort } from './listening.js';
import { until } from './until.js';

const DOVECOT = ['/usr/sbin/dovecot', '/usr/bin/dovecot'].find((p) => existsSync(p));

export interface Dovecot {
  port: number;
  stop(): Promise<void>;
}

/**
 * Why the IMAP tests cannot run here, or null: Debian's `dovecot-imapd` must be installed (.ci/run
 * installs it). Under CI a missing server fails the test instead of skipping it.
 */
export function dovecotMissing(): string | null {
  if (DOVECOT) return null;
  if (process.env.CI === 'true')
    throw new Error('dovecot is not installed (apt-get install -y dovecot-imapd)');
  return 'dovecot is not installed (apt-get install -y dovecot-imapd)';
}

/** Numeric ids of a system user, from /etc/passwd (root runs dovecot with its own service users). */
function idsOf(name: string): { uid: number; gid: number } | null {
  try {
    const line = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${name}:`));
    if (!line) return null;
    const [, , uid, gid] = line.split(':');
    return { uid: Number(uid), gid: Number(gid) };
  } catch {
    return null;
  }
}

/**
 * A private dovecot (IMAP only, plain text on a loopback port, users from a passwd file) in a temp
 * directory with its own configuration; `stop()` ends its whole process group (SIGTERM, then SIGKILL).
 */
export async function startDovecot(users: Record<string, string>): Promise<Dovecot> {
  if (!DOVECOT) throw new Error('dovecot is not installed');
  const dir = mkdtempSync(path.join(tmpdir(), 'dovecot-'));
  chmodSync(dir, 0o755);
  const mail = path.join(dir, 'mail');
  mkdirSync(mail);
  const root = process.getuid?.() === 0;
  const me = userInfo().username;
  const internal = root && idsOf('dovecot') ? 'dovecot' : me;
  const login = root && idsOf('dovenull') ? 'dovenull' : me;
  const owner = root ? idsOf(internal) : null;
  if (owner) chownSync(mail, owner.uid, owner.gid);
  const port = await freePort();
  writeFileSync(
    path.join(dir, 'passwd'),
    Object.entries(users)
      .map(([u, pw]) => `${u}:{PLAIN}${pw}`)
      .join('\n'),
  );
  writeFileSync(
    path.join(dir, 'dovecot.conf'),
    `base_dir = ${dir}/run
state_dir = ${dir}/state
instance_name = test-${port}
log_path = ${dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_login_user = ${login}
default_internal_user = ${internal}
first_valid_uid = 0
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/passwd
}
userdb {
  driver = static
  args = uid=${owner?.uid ?? process.getuid?.()} gid=${owner?.gid ?? process.getgid?.()} home=${mail}/%u
}
mail_location = maildir:~/Maildir
service imap-login {
  chroot =
  inet_listener imap {
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
`,
  );
  const child: ChildProcess = spawn(DOVECOT, ['-F', '-c', path.join(dir, 'dovecot.conf')], {
    detached: true,
    stdio: 'ignore',
  });
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const accepts = () =>
    new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
  await until(async () => exited || (await accepts()), `dovecot on port ${port}`, 20_000);
  if (exited) throw new Error(`dovecot did not start (see ${dir}/dovecot.log)`);
  return {
    port,
    async stop() {
      const group = -(child.pid as number);
      try {
        process.kill(group, 'SIGTERM');
      } catch {
        // gone already
      }
      const grace = setTimeout(() => {
        try {
          process.kill(group, 'SIGKILL');
        } catch {
          // gone already
        }
      }, 3_000);
      await exit;
      clearTimeout(grace);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
