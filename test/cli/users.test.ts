import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  firstKeyBox,
  NEW_ADMIN_KEY_COMMAND,
  NEW_SETUP_LINK_COMMAND,
  USERS_USAGE,
} from '../../src/cli/help.js';
import { describeCliError } from '../../src/cli/keys.js';
import { readFirstLine, usersCommand } from '../../src/cli/users.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { login, OWNER_EMAIL, tokenOf } from '../portal/support.js';

const dialects = await testDialects();

describe.each(dialects)('users command on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
  });
  afterAll(async () => {
    await p.close();
  });

  const run = async (args: string[], password = '') => {
    const lines: string[] = [];
    const { auth, portal } = p.ctx.apis;
    try {
      const code = await usersCommand(
        { auth: auth!, portal: portal! },
        args,
        (l) => lines.push(l),
        async () => password,
      );
      return { code, out: lines.join('\n') };
    } catch (error) {
      return { code: 1, out: describeCliError(error) };
    }
  };

  it('setup-link prints a fresh one-time link; only the newest works', async () => {
    const first = await run(['setup-link', OWNER_EMAIL]);
    const second = await run(['setup-link', 'Owner@Localhost']);
    expect(first.code).toBe(0);
    expect(second.out).toMatch(/^One-time link that sets the password of owner@localhost/);
    const url = second.out.split('\n')[1] ?? '';
    expect(url).toMatch(/^http:\/\/localhost:8080\/portal\/#\/setup\?token=[\w-]{43}$/);
    // Which address the link was made from, and how to make it another one.
    if (!process.env.PUBLIC_URL) expect(second.out).toContain('PUBLIC_URL=<that address>');
    const setup = (link: string) =>
      p.request({
        method: 'POST',
        url: '/v1/auth/setup',
        key: null,
        payload: { token: tokenOf(link), password: 'harvest pylon 62 tide' },
      });
    expect((await setup(first.out.split('\n')[1] ?? '')).statusCode).toBe(400);
    expect((await setup(url)).statusCode).toBe(200);
  });

  it('set-password sets it from stdin; a weak one or an unknown email is refused in words', async () => {
    const set = await run(['set-password', OWNER_EMAIL], 'mosaic ember 14 ridge');
    expect(set).toEqual({ code: 0, out: 'Password of owner@localhost set; their sessions were ended.' });
    expect((await login(p, OWNER_EMAIL, 'mosaic ember 14 ridge')).csrfToken).toBeTruthy();
    const weak = await run(['set-password', OWNER_EMAIL], 'password1234');
    expect(weak.code).toBe(1);
    expect(weak.out).toMatch(/^VALIDATION_ERROR: Password is too common/);
    const unknown = await run(['setup-link', 'nobody@example.com']);
    expect(unknown).toEqual({ code: 1, out: "NOT_FOUND: No member has the email 'nobody@example.com'" });
  });

  it('prints its usage for help, and exits 2 on a wrong call', async () => {
    expect(await run(['help'])).toEqual({ code: 0, out: USERS_USAGE });
    expect((await run([])).code).toBe(2);
    expect((await run(['setup-link'])).code).toBe(2);
    expect((await run(['remove', OWNER_EMAIL])).code).toBe(2);
  });
});

describe('the first-start box', () => {
  it('holds the key and the owner’s setup link, each with the command that makes another', () => {
    const url = 'http://localhost:8080/portal/#/setup?token=abc';
    const box = firstKeyBox('PROD_API_x', url).split('\n');
    const inside = box.filter((line) => line.startsWith('│')).join('\n');
    for (const text of ['PROD_API_x', NEW_ADMIN_KEY_COMMAND, url, NEW_SETUP_LINK_COMMAND])
      expect(inside).toContain(text);
    const widths = new Set(box.filter((line) => line.length > 0).map((line) => line.length));
    expect(widths.size).toBe(1);
    // With a preset key (PLATFORM_BOOTSTRAP_KEY) only the link is shown.
    const linkOnly = firstKeyBox(null, url);
    expect(linkOnly).toContain(url);
    expect(linkOnly).not.toContain(NEW_ADMIN_KEY_COMMAND);
  });
});

describe('reading the password', () => {
  it('takes the first line of stdin, without its line ending', async () => {
    expect(await readFirstLine(Readable.from(['secret phrase', ' here\r\nsecond line\n']))).toBe(
      'secret phrase here',
    );
    expect(await readFirstLine(Readable.from(['no newline']))).toBe('no newline');
  });
});

describe('platform users as a process', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'platform-users-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('on a fresh database: the first-start key on stderr, the setup link on stdout', async () => {
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', path.resolve('src/main.ts'), 'users', 'setup-link', 'owner@localhost'],
        {
          timeout: 60_000,
          env: { ...process.env, DATA_DIR: dir, DATABASE_URL: '', REDIS_URL: '', LOG_LEVEL: 'silent' },
        },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
      ),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/PROD_API_[0-9A-Za-z]+/);
    expect(run.stdout).toMatch(/^One-time link that sets the password of owner@localhost/);
    expect(run.stdout).toMatch(/\/portal\/#\/setup\?token=[\w-]{43}\n$/);
  }, 90_000);
});
