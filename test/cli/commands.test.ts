import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HELP } from '../../src/cli/help.js';
import { generateKey } from '../../src/modules/auth/key-format.js';
import { freePort } from '../helpers/listening.js';
import { echoFlow, flow } from '../workflows/support.js';

// `platform …` as a process, on the sources (as test/core/cli-and-process does): what a person sees,
// the exit code included.
const MAIN = path.resolve('src/main.ts');
const dirs: string[] = [];

function tempDir(prefix = 'platform-cli-'): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

type Run = { code: number; stdout: string; stderr: string };

function platform(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', MAIN, ...args],
      {
        // A command that started a server instead would never end: the timeout fails the test.
        timeout: 60_000,
        env: {
          ...process.env,
          DATA_DIR: env.DATA_DIR ?? tempDir(),
          DATABASE_URL: '',
          REDIS_URL: '',
          LOG_LEVEL: 'silent',
          // A known key: no first-start box in the output.
          PLATFORM_BOOTSTRAP_KEY: generateKey('production'),
          ...env,
        },
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const writeJson = (file: string, value: unknown) => {
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  return file;
};

describe('platform help', () => {
  it('prints the commands for no command, help and --help, starting nothing; unknown → stderr, exit 2', async () => {
    const [none, help, dashed, unknown] = await Promise.all([
      platform([]),
      platform(['help']),
      platform(['--help']),
      platform(['srve']),
    ]);
    for (const run of [none, help, dashed]) expect(run).toEqual({ code: 0, stdout: `${HELP}\n`, stderr: '' });
    for (const command of ['serve', 'worker', 'migrate', 'workflows', 'keys'])
      expect(HELP).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe(`Unknown command 'srve'.\n\n${HELP}\n`);
  }, 90_000);
});

describe('platform serve on a busy port', () => {
  it('says so in one line naming the port and the settings, exit 1, no stack trace, before booting', async () => {
    const port = await freePort();
    const holder: Server = createServer();
    await new Promise<void>((r) => holder.listen(port, '127.0.0.1', r));
    const dataDir = tempDir();
    try {
      const run = await platform(['serve'], {
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        DATA_DIR: dataDir,
      });
      // Told before the boot: no database was created, no first key printed.
      expect(readdirSync(dataDir)).toEqual([]);
      expect(run.stdout).not.toContain('PROD_API_');
      expect(run.code).toBe(1);
      const lines = run.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(`^Cannot listen on 127\\.0\\.0\\.1:${port}: port ${port} is already in use`),
      );
      expect(lines[0]).toContain('set PORT');
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect(run.stdout).not.toContain('EADDRINUSE');
    } finally {
      await new Promise((r) => holder.close(r));
    }
  }, 90_000);
});

describe('platform output piped into a reader that leaves early (| head)', () => {
  it("ends quietly with the command's own exit code: no EPIPE stack trace", async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'help'], {
      env: { ...process.env, DATA_DIR: tempDir() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader is gone before the command writes its first line.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const code = await new Promise((resolve) => child.once('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  }, 90_000);
});

describe('platform workflows import / export', () => {
  it('names every bad file with its reason, imports none of the folder, exits 1', async () => {
    const dataDir = tempDir();
    const defs = tempDir('platform-defs-');
    const good = writeJson(path.join(defs, 'a-good.json'), { id: 'wf_cli_good', ...echoFlow('cli-good') });
    const broken = writeJson(path.join(defs, 'b-broken.json'), '{"name": "x", nodes: []}');
    const noNodes = writeJson(path.join(defs, 'c-no-nodes.json'), { name: 'bad', connections: {} });
    const unknown = writeJson(
      path.join(defs, 'd-unknown.json'),
      flow('unknown node', [{ name: 'Mystery', type: 'noSuchNode' }]),
    );
    const twice = writeJson(path.join(defs, 'e-twice.json'), [
      { id: 'wf_cli_good', ...echoFlow('cli-again') },
      { id: 'wf_cli_fine', ...echoFlow('cli-fine') },
    ]);

    const run = await platform(['workflows', 'import', defs], { DATA_DIR: dataDir });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const blocks = run.stderr.trim().split('\n');
    expect(blocks.filter((l) => !l.startsWith('  '))).toEqual([
      expect.stringMatching(new RegExp(`^VALIDATION_ERROR: ${broken}: not valid JSON`)),
      `VALIDATION_ERROR: ${noNodes}: not a workflow definition`,
      `VALIDATION_ERROR: ${unknown}: the workflow is not valid`,
      `CONFLICT: ${twice}[0]: id 'wf_cli_good' is also defined in ${good}`,
      '4 problem(s): nothing was imported',
    ]);
    expect(run.stderr).toContain('  /: must have required properties nodes');
    expect(run.stderr).toMatch(/noSuchNode/);

    const exported = await platform(['workflows', 'export', '--all'], { DATA_DIR: dataDir });
    expect(JSON.parse(exported.stdout)).toEqual([]);
  }, 90_000);

  it('export --all imports again unchanged: as one array file, as a folder, into a fresh database', async () => {
    const source = tempDir();
    const defs = tempDir('platform-defs-');
    writeJson(path.join(defs, 'one.json'), { id: 'wf_rt_one', ...echoFlow('rt-one'), active: true });
    writeJson(path.join(defs, 'two.json'), {
      id: 'wf_rt_two',
      ...echoFlow('rt-two'),
      settings: { saveDataSuccessExecution: 'none' },
    });
    expect((await platform(['workflows', 'import', defs], { DATA_DIR: source })).code).toBe(0);
    const first = await platform(['workflows', 'export', '--all'], { DATA_DIR: source });
    expect(first.code).toBe(0);
    const all = JSON.parse(first.stdout) as Array<{ id: string; active: boolean }>;
    expect(all.map((w) => [w.id, w.active])).toEqual([
      ['wf_rt_one', true],
      ['wf_rt_two', false],
    ]);

    const file = writeJson(path.join(tempDir('platform-export-'), 'all.json'), first.stdout);
    const folder = path.join(tempDir('platform-export-'), 'out');
    const [sameDb, fresh, written] = await Promise.all([
      platform(['workflows', 'import', file], { DATA_DIR: source }).then(() =>
        platform(['workflows', 'export', '--all'], { DATA_DIR: source }),
      ),
      (async () => {
        const dataDir = tempDir();
        const imported = await platform(['workflows', 'import', file], { DATA_DIR: dataDir });
        expect(imported.stdout.trim().split('\n')).toEqual([
          `created: wf_rt_one echo rt-one (${file}[0])`,
          `created: wf_rt_two echo rt-two (${file}[1])`,
        ]);
        return platform(['workflows', 'export', '--all'], { DATA_DIR: dataDir });
      })(),
      platform(['workflows', 'export', '--all', '--out', folder], { DATA_DIR: source }),
    ]);
    expect(sameDb.stdout).toBe(first.stdout);
    expect(fresh.stdout).toBe(first.stdout);

    expect(written.stdout.trim()).toBe(`wrote 2 definition(s) to ${folder}`);
    expect(readdirSync(folder).sort()).toEqual(['wf_rt_one.json', 'wf_rt_two.json']);
    expect(JSON.parse(readFileSync(path.join(folder, 'wf_rt_one.json'), 'utf8'))).toEqual(all[0]);
    const fromFolder = tempDir();
    expect((await platform(['workflows', 'import', folder], { DATA_DIR: fromFolder })).code).toBe(0);
    expect((await platform(['workflows', 'export', '--all'], { DATA_DIR: fromFolder })).stdout).toBe(
      first.stdout,
    );
  }, 180_000);

  it('a definition that cannot be activated here is imported, named, and the exit is 1', async () => {
    const defs = tempDir('platform-defs-');
    mkdirSync(path.join(defs, 'x'));
    const file = writeJson(path.join(defs, 'x', 'guarded.json'), {
      id: 'wf_rt_guarded',
      ...echoFlow('rt-guarded', { authentication: 'headerAuth', credential: 'cred_missing' }),
      active: true,
    });
    const dataDir = tempDir();
    const run = await platform(['workflows', 'import', file], { DATA_DIR: dataDir });
    expect(run.code).toBe(1);
    expect(run.stdout.trim()).toBe(`created: wf_rt_guarded echo rt-guarded (${file})`);
    expect(run.stderr).toContain(`${file}: imported, but not activated`);
    expect(run.stderr).toContain("credential 'cred_missing' does not exist");
    const exported = JSON.parse(
      (await platform(['workflows', 'export', 'wf_rt_guarded'], { DATA_DIR: dataDir })).stdout,
    );
    expect(exported.active).toBe(false);
  }, 90_000);
});
