import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import {
  nodeSqliteUsable,
  openRawSqlite,
  SqliteDriverMissing,
  sqliteDriverName,
} from '../../src/core/db/sqlite-driver.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..', '..');
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the SQLite driver choice', () => {
  it('is node:sqlite wherever it loads without a flag and has backup() and columns(), else better-sqlite3', () => {
    const major = Number(process.versions.node.split('.')[0]);
    // Node 20 has no node:sqlite; Node 24 always has all of it.
    if (major <= 20) expect(nodeSqliteUsable()).toBe(false);
    if (major >= 24) expect(nodeSqliteUsable()).toBe(true);
    expect(sqliteDriverName({})).toBe(nodeSqliteUsable() ? 'node:sqlite' : 'better-sqlite3');
    expect(sqliteDriverName({ PLATFORM_SQLITE_DRIVER: 'better' })).toBe('better-sqlite3');
    expect(sqliteDriverName({ PLATFORM_SQLITE_DRIVER: 'node' })).toBe('node:sqlite');
  });

  it('opens a database on the chosen driver', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sqlite-driver-'));
    dirs.push(dir);
    const raw = await openRawSqlite(path.join(dir, 'a.db'));
    try {
      expect(raw.driver).toBe(sqliteDriverName());
      raw.exec('create table t (n integer)');
      raw.prepare('insert into t (n) values (?)').run([7]);
      expect(raw.scalar('select sum(n) from t')).toBe(7);
    } finally {
      raw.close();
    }
  });

  it('says what to do when better-sqlite3 is needed and did not install', async () => {
    // npm skips an optional dependency that fails to build: the child resolves better-sqlite3 as absent.
    const hook = `data:text/javascript,${encodeURIComponent(
      `export async function resolve(s, c, next) {
        if (s === 'better-sqlite3') { const e = new Error('Cannot find package better-sqlite3'); e.code = 'ERR_MODULE_NOT_FOUND'; throw e; }
        return next(s, c);
      }`,
    )}`;
    const register = `data:text/javascript,${encodeURIComponent(
      `import { register } from 'node:module'; register(${JSON.stringify(hook)});`,
    )}`;
    const code = `
      const { openRawSqlite } = await import('./src/core/db/sqlite-driver.ts');
      try { await openRawSqlite(':memory:', { driver: 'better-sqlite3' }); console.log('opened'); }
      catch (error) { console.log(JSON.stringify({ name: error.name, message: error.message })); }`;
    const { stdout } = await run(
      process.execPath,
      ['--import', register, '--import', 'tsx', '--input-type=module', '-e', code],
      { cwd: root, timeout: 60_000 },
    );
    const result = JSON.parse(stdout.trim()) as { name: string; message: string };
    expect(result.name).toBe(new SqliteDriverMissing(null).name);
    expect(result.message).toMatch(/optional better-sqlite3 driver, which is not installed/);
    expect(result.message).toMatch(/Use Node 24/);
    expect(result.message).toMatch(/DATABASE_URL/);
  });
});
