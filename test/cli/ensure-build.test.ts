import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// scripts/ensure-build.mjs in a small project of its own: its src/, and a stand-in `typescript` package
// whose tsc writes dist/main.js and counts its runs (the real tsc takes 20 s; the check is what is tested).
const SCRIPT = path.resolve('scripts/ensure-build.mjs');
const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const FAKE_TSC = `
const fs = require('node:fs');
fs.appendFileSync('tsc-runs', 'x');
if (fs.existsSync('fail-build')) { console.error('src/a.ts(1,1): error TS2322'); process.exit(2); }
fs.mkdirSync('dist', { recursive: true });
// As slow as needed for two callers to overlap.
const until = Date.now() + 300; while (Date.now() < until);
fs.writeFileSync('dist/main.js', '');
// The light commands' entry (src/cli/commands.ts), importing a dependency, when the project has one.
if (fs.existsSync('with-commands')) {
  fs.mkdirSync('dist/cli', { recursive: true });
  fs.writeFileSync('dist/cli/commands.js', "import { word } from 'dep'; export const answer = word + '!';");
}
// The server's entry (src/server-parts.ts): a bundled package, a file finding a sibling by its own URL,
// and a part imported on first use that needs a package left to node_modules.
if (fs.existsSync('with-server')) {
  fs.mkdirSync('dist/sub', { recursive: true });
  fs.writeFileSync('dist/server-parts.js', "import ms from 'ms'; import { where } from './sub/where.js';" +
    " export const answer = ms + '|' + where; export const later = () => import('./sub/later.js');");
  fs.writeFileSync('dist/sub/where.js', "export const where = new URL('./data.txt', import.meta.url).pathname;");
  fs.writeFileSync('dist/sub/later.js', "import other from 'other'; export default other;");
}
`;

function project(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'platform-ensure-build-'));
  dirs.push(root);
  mkdirSync(path.join(root, 'scripts'));
  copyFileSync(SCRIPT, path.join(root, 'scripts', 'ensure-build.mjs'));
  copyFileSync(path.resolve('scripts/tsc-path.mjs'), path.join(root, 'scripts', 'tsc-path.mjs'));
  mkdirSync(path.join(root, 'src', 'core'), { recursive: true });
  writeFileSync(path.join(root, 'src', 'core', 'a.ts'), 'export const a = 1;\n');
  for (const f of ['package.json', 'tsconfig.json', 'tsconfig.build.json'])
    writeFileSync(path.join(root, f), '{}');
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin');
  mkdirSync(tsc, { recursive: true });
  writeFileSync(path.join(root, 'node_modules', 'typescript', 'package.json'), '{"name": "typescript"}');
  writeFileSync(path.join(tsc, 'tsc'), FAKE_TSC);
  return root;
}

type Run = { code: number; stderr: string };
function ensure(root: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(root, 'scripts', 'ensure-build.mjs'), ...args],
      { cwd: root },
      (e, _o, stderr) => resolve({ code: e ? (typeof e.code === 'number' ? e.code : -1) : 0, stderr }),
    );
  });
}

const runs = (root: string) =>
  existsSync(path.join(root, 'tsc-runs')) ? readFileSync(path.join(root, 'tsc-runs'), 'utf8').length : 0;

/**
 * The last build, moved 5 s into the past: a change made now is then newer whatever the file system's
 * mtime resolution (a future mtime instead would stay newer than the next build's stamp too).
 */
function ageBuild(root: string) {
  const past = new Date(Date.now() - 5_000);
  utimesSync(path.join(root, 'dist', '.build-stamp'), past, past);
}

function touch(file: string) {
  const now = new Date();
  utimesSync(file, now, now);
}

describe('scripts/ensure-build.mjs', () => {
  it('builds once, then not until a file under src/ (or a tsconfig) changes, is added or removed', async () => {
    const root = project();
    expect((await ensure(root, '--check')).code).toBe(1);
    const first = await ensure(root);
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/no build yet: compiling/);
    expect(runs(root)).toBe(1);

    expect(await ensure(root)).toEqual({ code: 0, stderr: '' });
    expect((await ensure(root, '--check')).code).toBe(0);
    expect(runs(root)).toBe(1);

    ageBuild(root);
    touch(path.join(root, 'src', 'core', 'a.ts'));
    expect((await ensure(root, '--check')).code).toBe(1);
    expect((await ensure(root)).stderr).toMatch(/src\/ changed since the last build/);
    expect(runs(root)).toBe(2);

    // A removed file changes only its folder's mtime.
    ageBuild(root);
    writeFileSync(path.join(root, 'src', 'core', 'b.ts'), '');
    await ensure(root);
    expect(runs(root)).toBe(3);
    ageBuild(root);
    rmSync(path.join(root, 'src', 'core', 'b.ts'));
    await ensure(root);
    expect(runs(root)).toBe(4);
    await ensure(root);
    expect(runs(root)).toBe(4);

    ageBuild(root);
    touch(path.join(root, 'tsconfig.build.json'));
    await ensure(root);
    expect(runs(root)).toBe(5);
    await ensure(root, '--force');
    expect(runs(root)).toBe(6);
  }, 60_000);

  it('processes started together build once', async () => {
    const root = project();
    const all = await Promise.all([ensure(root), ensure(root), ensure(root)]);
    expect(all.map((r) => r.code)).toEqual([0, 0, 0]);
    expect(runs(root)).toBe(1);
    expect(existsSync(path.join(root, 'dist', '.build-lock'))).toBe(false);
  }, 60_000);

  it('a failed build: exit 1 for a start, a warning and exit 0 for npm install, and no stamp', async () => {
    const root = project();
    writeFileSync(path.join(root, 'fail-build'), '');
    const start = await ensure(root);
    expect(start.code).toBe(1);
    expect(start.stderr).toMatch(/error TS2322[\s\S]*the build failed/);
    const install = await ensure(root, '--install');
    expect(install.code).toBe(0);
    expect(install.stderr).toMatch(/npm install goes on/);
    expect(existsSync(path.join(root, 'dist', '.build-stamp'))).toBe(false);
    rmSync(path.join(root, 'fail-build'));
    expect((await ensure(root)).code).toBe(0);
    expect(statSync(path.join(root, 'dist', '.build-stamp')).isFile()).toBe(true);
  }, 60_000);

  it('bundles the light CLI commands with their dependencies after a build, and never leaves a stale bundle', async () => {
    const root = project();
    writeFileSync(path.join(root, 'with-commands'), '');
    const dep = path.join(root, 'node_modules', 'dep');
    mkdirSync(dep);
    writeFileSync(path.join(dep, 'package.json'), '{"name": "dep", "type": "module", "main": "index.js"}');
    writeFileSync(path.join(dep, 'index.js'), "export const word = 'bundled';");
    symlinkSync(path.resolve('node_modules/esbuild'), path.join(root, 'node_modules', 'esbuild'), 'dir');
    expect((await ensure(root)).code).toBe(0);
    const bundle = path.join(root, 'dist', 'cli-commands.js');
    rmSync(dep, { recursive: true });
    // The dependency is inside the bundle: it loads with the package gone.
    expect((await import(pathToFileURL(bundle).href)).answer).toBe('bundled!');
    writeFileSync(path.join(root, 'fail-build'), '');
    expect((await ensure(root, '--force')).code).toBe(1);
    expect(existsSync(bundle)).toBe(false);
  }, 60_000);

  it('bundles the server with its listed packages, keeps its files finding their siblings, and leaves the rest lazy', async () => {
    const root = project();
    writeFileSync(path.join(root, 'with-server'), '');
    const pkg = (name: string, body: string) => {
      const dir = path.join(root, 'node_modules', name);
      mkdirSync(dir);
      writeFileSync(
        path.join(dir, 'package.json'),
        `{"name": "${name}", "type": "module", "main": "index.js"}`,
      );
      writeFileSync(path.join(dir, 'index.js'), body);
      return dir;
    };
    const ms = pkg('ms', "export default 'bundled';");
    pkg('other', "export default 'from node_modules';");
    symlinkSync(path.resolve('node_modules/esbuild'), path.join(root, 'node_modules', 'esbuild'), 'dir');
    expect((await ensure(root)).code).toBe(0);
    const bundle = path.join(root, 'dist', 'bundle', 'server.js');
    rmSync(ms, { recursive: true });
    const loaded = await import(pathToFileURL(bundle).href);
    // `ms` is inside the bundle; the file's URL is still the one beside its own sibling under dist/.
    expect(loaded.answer).toBe(`bundled|${path.join(root, 'dist', 'sub', 'data.txt')}`);
    // A package nobody listed is imported, on first use, from node_modules.
    expect(readFileSync(bundle, 'utf8')).not.toContain('from node_modules');
    expect((await loaded.later()).default).toBe('from node_modules');
    writeFileSync(path.join(root, 'fail-build'), '');
    expect((await ensure(root, '--force')).code).toBe(1);
    expect(existsSync(bundle)).toBe(false);
  }, 60_000);
});
