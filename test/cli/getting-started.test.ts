import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEW_ADMIN_KEY_COMMAND } from '../../src/cli/help.js';
import { stopChild } from '../helpers/child-process.js';
import { freePort } from '../helpers/listening.js';

// docs/getting-started.md as a newcomer runs it: the built server started as `npm start` starts it,
// then the doc's shell blocks in order, in one shell, so a command that stops working fails here.
const run = promisify(execFile);
const ROOT = path.resolve('.');
const DOC = readFileSync(path.join(ROOT, 'docs/getting-started.md'), 'utf8');
const SKIP = '<!-- getting-started: not run by the test';
const PLATFORM_SCRIPT = 'node scripts/ensure-build.mjs && node dist/main.js';

/** The doc's ```sh blocks, each with whether the marker comment right above excludes it. */
function shellBlocks(doc: string): Array<{ code: string; skipped: boolean }> {
  return [...doc.matchAll(/(<!--[^\n]*-->\n)?```sh\n([\s\S]*?)```/g)].map((m) => ({
    code: m[2] ?? '',
    skipped: (m[1] ?? '').startsWith(SKIP),
  }));
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-getting-started-'));
const workDir = mkdtempSync(path.join(tmpdir(), 'platform-getting-started-cwd-'));
let server: ChildProcess | undefined;
let serverOut = '';
let port = 0;

const env = () => ({
  ...process.env,
  DATA_DIR: dataDir,
  DATABASE_URL: '',
  REDIS_URL: '',
  PORT: String(port),
  HOST: '127.0.0.1',
  LOG_LEVEL: 'info',
});

beforeAll(async () => {
  // What `npm start` does first: compile only when src/ changed since the last build.
  await run(process.execPath, ['scripts/ensure-build.mjs'], { cwd: ROOT, timeout: 240_000 });
  port = await freePort();
  server = spawn(process.execPath, ['dist/main.js', 'serve'], { cwd: ROOT, env: env() });
  server.stdout?.on('data', (chunk) => {
    serverOut += chunk;
  });
  server.stderr?.on('data', (chunk) => {
    serverOut += chunk;
  });
  for (let i = 0; i < 300; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (server.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the server did not start:\n${serverOut}`);
}, 300_000);

afterAll(async () => {
  await stopChild(server);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
});

describe('docs/getting-started.md', () => {
  it('prints the first key in a box with the command that makes another, the one the doc gives', () => {
    const key = /PROD_API_[0-9A-Za-z]+/.exec(serverOut)?.[0];
    expect(key).toBeDefined();
    const box = serverOut.split('\n').filter((l) => l.startsWith('│'));
    expect(box.some((l) => l.includes(key ?? '?'))).toBe(true);
    expect(box.some((l) => l.includes(NEW_ADMIN_KEY_COMMAND))).toBe(true);
    expect(DOC).toContain(NEW_ADMIN_KEY_COMMAND);
    // Apart from the logs: no JSON log line holds it.
    const logs = serverOut.split('\n').filter((l) => l.startsWith('{'));
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.join('\n')).not.toContain(key);
  });

  it('runs every command of the walkthrough against the started server', async () => {
    const blocks = shellBlocks(DOC);
    const skipped = blocks.filter((b) => b.skipped).map((b) => b.code);
    // Only the start and the pasted key are left to the reader; the test does both itself.
    expect(skipped).toHaveLength(2);
    expect(skipped[0]).toMatch(/npm install\s+npm start/);
    expect(skipped[1]).toMatch(/^export KEY=/);
    // `npm run -s platform --` is the build check, then this: the test runs the built code directly so
    // another test's edit under src/ cannot start a rebuild in the middle of the walkthrough.
    const scripts = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts;
    expect(scripts.platform).toBe(PLATFORM_SCRIPT);
    const cli = `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(ROOT, 'dist/main.js'))}`;
    const script = blocks
      .filter((b) => !b.skipped)
      .map((b) => b.code.replaceAll('npm run -s platform --', cli))
      .join('\n')
      .replaceAll('http://localhost:8080', `http://127.0.0.1:${port}`);
    expect(script).not.toContain('localhost:8080');

    const key = /PROD_API_[0-9A-Za-z]+/.exec(serverOut)?.[0] ?? '';
    const { stdout } = await run('bash', ['-c', `set -euo pipefail\n${script}`], {
      cwd: workDir,
      env: { ...env(), KEY: key, LOG_LEVEL: 'silent' },
      timeout: 120_000,
    }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`${error.message}\nstdout:\n${error.stdout}\nstderr:\n${error.stderr}`);
    });
    const lines = stdout.split('\n');
    expect(lines).toContain('bootstrap'); // the Admin key works
    expect(stdout).toMatch(/my-first-app\s+development\s+Writer/); // keys list shows the new key
    expect(lines).toContain('Hello, Ada!'); // the webhook answered through the workflow
    expect(lines).toContain('success'); // and the execution was recorded
    expect(lines).toContain('note_rose');
    expect(lines).toContain('Garden at dusk'); // the cart line carries the blend's name
    expect(lines).toContain('true'); // checkout reserved the stock
    expect(JSON.parse(lines.filter((l) => l.startsWith('{')).at(-1) ?? '{}')).toEqual({
      variantId: 'var_candle_4oz',
      onHand: 20,
      reserved: 2,
      available: 18,
    });
  }, 180_000);
});
