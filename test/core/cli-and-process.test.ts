import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { NEW_ADMIN_KEY_COMMAND } from '../../src/cli/help.js';
import { parseConfig } from '../../src/config.js';
import { generateKey } from '../../src/modules/auth/key-format.js';
import { until } from '../helpers/until.js';

const run = promisify(execFile);
const MAIN = path.resolve('src/main.ts');
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'platform-cli-'));
  dirs.push(dir);
  return dir;
}

async function cli(dataDir: string, args: string[], env: Record<string, string> = {}) {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', LOG_LEVEL: 'silent', ...env },
  });
  return stdout;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('command line', () => {
  it('creates, lists, rotates and revokes keys on the server’s data directory', async () => {
    const dataDir = tempDir();
    const created = JSON.parse(
      (
        await cli(dataDir, [
          'keys',
          'create',
          '--type',
          'development',
          '--role',
          'Writer',
          '--services',
          'workflow,commerce',
          '--name',
          'cli',
          '--json',
        ])
      )
        .trim()
        .split('\n')
        .at(-1) ?? '',
    );
    expect(created.key).toMatch(/^DEV_API_/);
    expect(created).toMatchObject({ name: 'cli', role: 'Writer', services: ['workflow', 'commerce'] });

    const listed = JSON.parse((await cli(dataDir, ['keys', 'list', '--json'])).trim());
    expect(listed.map((k: { id: string }) => k.id)).toContain(created.id);
    expect(JSON.stringify(listed)).not.toContain(created.key);

    const rotated = JSON.parse((await cli(dataDir, ['keys', 'rotate', created.id, '--json'])).trim());
    expect(rotated.key).not.toBe(created.key);

    // A server on the same directory honours what the CLI did.
    const { app } = await buildApp({
      config: parseConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', KEY_CACHE_TTL_SECONDS: '1' }),
      logger: false,
    });
    try {
      const health = (key: string) =>
        app.inject({ method: 'GET', url: '/v1/usage', headers: { authorization: `Bearer ${key}` } });
      expect((await health(created.key)).statusCode).toBe(401);
      expect((await health(rotated.key)).statusCode).toBe(403); // a workflow/commerce key, not core
      await cli(dataDir, ['keys', 'revoke', created.id]);
      // Another process revoked it: this one sees it within KEY_CACHE_TTL_SECONDS. The TTL's time must
      // pass (a bound on time, so a fixed wait; a loaded machine only makes it longer).
      await new Promise((r) => setTimeout(r, 1_100));
      const after = await health(rotated.key);
      expect(after.statusCode).toBe(401);
      expect(after.json().message).toMatch(/revoked/);
    } finally {
      await app.close();
    }
    expect(await cli(dataDir, ['migrate'])).toMatch(/up to date/);
  }, 120_000); // each CLI call starts a process (2–5 s under load)

  it('registers PLATFORM_BOOTSTRAP_KEY on first start and refuses a malformed one', async () => {
    const key = generateKey('production');
    const dataDir = tempDir();
    const out = await cli(dataDir, ['keys', 'list', '--json'], { PLATFORM_BOOTSTRAP_KEY: key });
    expect(out).not.toContain('shown once');
    const [boot] = JSON.parse(out.trim());
    expect(boot).toMatchObject({
      name: 'bootstrap',
      type: 'production',
      role: 'Admin',
      services: ['*'],
      last4: key.slice(-4),
    });
    // One character changed, never to itself (a key ending in `x` failed this test one time in 62).
    const mistyped = `${key.slice(0, -1)}${key.endsWith('x') ? 'y' : 'x'}`;
    await expect(cli(tempDir(), ['keys', 'list'], { PLATFORM_BOOTSTRAP_KEY: mistyped })).rejects.toThrow(
      /PLATFORM_BOOTSTRAP_KEY/,
    );
  }, 120_000); // each CLI call starts a process (2–5 s under load)

  it('serve prints the first key once, logs JSON without secrets, and exits cleanly on SIGTERM', async () => {
    const dataDir = tempDir();
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve'], {
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        DATABASE_URL: '',
        REDIS_URL: '',
      },
    });
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    // A start from the sources (tsx) on a loaded machine can take far longer than the 10 s this waited.
    await until(() => stdout.includes('Server listening'), 'the server to listen', 90_000);
    const key = /PROD_API_[0-9A-Za-z]+/.exec(stdout)?.[0];
    expect(key).toBeDefined();
    const res = await fetch(`http://127.0.0.1:${port}/v1/api-keys`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const logLines = stdout.split('\n').filter((l) => l.startsWith('{'));
    expect(logLines.length).toBeGreaterThan(2);
    for (const line of logLines) expect(() => JSON.parse(line)).not.toThrow();
    expect(logLines.join('\n')).not.toContain(key);
    expect(stdout.split(key ?? '').length - 1).toBe(1);
    // In a box of its own, with the command that makes another should it be lost.
    const box = stdout
      .split('\n')
      .filter((l) => l.startsWith('│'))
      .join('\n');
    expect(box).toContain(key);
    expect(box).toContain(NEW_ADMIN_KEY_COMMAND);
  }, 120_000);
});
