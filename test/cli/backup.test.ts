import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type Platform } from '../../src/app.js';
import { backupCommand, restoreCommand } from '../../src/cli/backup.js';
import { type Config, parseConfig } from '../../src/config.js';
import { openRawSqlite, sqliteDriverName } from '../../src/core/db/sqlite-driver.js';
import { stopChild } from '../helpers/child-process.js';

const configFor = (dataDir: string, env: Record<string, string> = {}): Config =>
  parseConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', WORKFLOW_WORKER: 'false', ...env });

/** A platform on a SQLite file in `dataDir`, as `platform serve` runs it; returns it and its admin key. */
async function start(dataDir: string): Promise<{ platform: Platform; key: string }> {
  const platform = await buildApp({ config: configFor(dataDir), logger: false });
  await platform.app.ready();
  const boot = await platform.ctx.apis.auth?.bootstrap();
  return { platform, key: boot?.createdKey ?? '' };
}

/**
 * Creates a key as a client would: a 503 "busy" (another process held SQLite's write lock past the
 * busy timeout, as a process writing flat out can on a loaded machine) is the platform's answer to
 * retry, and is retried, a few times.
 */
async function createKey(platform: Platform, adminKey: string, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const res = await platform.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: { authorization: `Bearer ${adminKey}` },
      payload: { name, type: 'development', services: ['core'], role: 'Reader' },
    });
    if (res.statusCode === 201) return;
    const busy =
      res.statusCode === 503 && (res.json() as { details?: { reason?: string } }).details?.reason === 'busy';
    if (!busy || attempt === 5) throw new Error(`key ${name}: ${res.statusCode} ${res.body}`);
  }
}

/** Writer processes a test started: ended by pid after each test, whatever its outcome. */
const children: ChildProcess[] = [];

/** The key names in the database, after checking the admin key still authenticates there. */
async function keyNames(platform: Platform, adminKey: string): Promise<string[]> {
  const res = await platform.app.inject({
    method: 'GET',
    url: '/v1/api-keys',
    headers: { authorization: `Bearer ${adminKey}` },
  });
  expect(res.statusCode).toBe(200);
  const rows = await platform.ctx.db.selectFrom('api_keys').select('name').execute();
  return rows.map((r) => r.name);
}

/**
 * Another process writing to the database as fast as it can (a worker, a second server), until
 * stopped; it writes 20 rows a transaction, says `ready` once it has written, and how many rows it wrote when it stops.
 */
function startWriterProcess(file: string) {
  // The driver the platform uses on this Node (better-sqlite3 aborts on Node 24: sqlite-driver.ts).
  const open =
    sqliteDriverName() === 'node:sqlite'
      ? `new (require('node:sqlite').DatabaseSync)(${JSON.stringify(file)})`
      : `new (require('better-sqlite3'))(${JSON.stringify(file)})`;
  const script = `
    const db = ${open};
    db.exec('pragma busy_timeout = 5000');
    const insert = db.prepare(
      "insert into executions (id, account_id, workflow_id, workflow_version, mode, status, finished," +
      " trigger_data, started_at) values (?, 'acc_child', 'wf_child', 1, 'manual', 'success', 1, '{}', ?)");
    let n = 0;
    const batch = () => {
      db.exec('begin');
      for (let i = 0; i < 20; i++) insert.run('ex_child_' + n++, new Date().toISOString());
      db.exec('commit');
    };
    process.on('SIGTERM', () => { process.stdout.write('wrote ' + n + '\\n'); process.exit(0); });
    (function write() {
      batch();
      if (n === 100) process.stdout.write('ready\\n');
      setImmediate(write);
    })();`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return {
    ready: async () => {
      while (!output.includes('ready')) await new Promise((r) => setTimeout(r, 5));
    },
    stop: async (): Promise<number> => {
      await stopChild(child);
      return Number(/wrote (\d+)/.exec(output)?.[1]);
    },
  };
}

describe('platform backup and restore (SQLite)', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'platform-backup-'));
  const live = path.join(root, 'live');
  const backupFile = path.join(root, 'platform-backup.db');
  let running: { platform: Platform; key: string };
  const lines: string[] = [];
  const print = (line: string) => lines.push(line);

  beforeAll(async () => {
    running = await start(live);
    // Some bulk, so the copy is more than a few pages.
    const filler = 'x'.repeat(4_000);
    for (let i = 0; i < 500; i++)
      await running.platform.ctx.db
        .insertInto('executions')
        .values({
          id: `ex_fill_${i}`,
          account_id: 'acc_fill',
          workflow_id: 'wf_fill',
          workflow_version: 1,
          mode: 'manual',
          status: 'success',
          finished: 1,
          retry_of: null,
          trigger_data: filler,
          run_data: null,
          error_message: null,
          response: null,
          wait_till: null,
          started_at: new Date().toISOString(),
          stopped_at: null,
        })
        .execute();
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map((child) => stopChild(child)));
  });
  afterAll(async () => {
    await running.platform.app.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('backs up the live database while writes go on, and the copy restores into a fresh folder', async () => {
    for (let i = 0; i < 5; i++) await createKey(running.platform, running.key, `before-${i}`);
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        await createKey(running.platform, running.key, `during-${written}`);
        written++;
      }
    })();
    // Its failure is the test's, reported where it is awaited below, not as an unhandled rejection meanwhile.
    writer.catch(() => undefined);
    const other = startWriterProcess(path.join(live, 'platform.db'));
    await other.ready();
    // Let the writer get going before the copy starts, and keep it going after.
    while (written < 3) await new Promise((r) => setImmediate(r));
    const code = await backupCommand([backupFile], { config: configFor(live), print });
    const writtenByTheEnd = written;
    writing = false;
    await writer;
    const otherWrote = await other.stop();
    expect(code).toBe(0);
    expect(lines.join('\n')).toMatch(/Backed up .* migrations\)/);
    expect(lines.join('\n')).toContain('encryption.key');
    expect(writtenByTheEnd).toBeGreaterThan(3);
    expect(statSync(backupFile).mode & 0o777).toBe(0o600);

    const fresh = path.join(root, 'fresh');
    lines.length = 0;
    expect(await restoreCommand([backupFile], { config: configFor(fresh), print })).toBe(0);
    expect(lines[0]).toMatch(/^Restored .* 0 migration\(s\) applied$/);
    const restored = await start(fresh);
    try {
      expect(restored.key).toBe(''); // the owner exists already: no new first-start key
      const names = await keyNames(restored.platform, running.key);
      for (let i = 0; i < 5; i++) expect(names).toContain(`before-${i}`);
      const during = names.filter((n) => n.startsWith('during-'));
      expect(during.length).toBeGreaterThanOrEqual(3);
      expect(during.length).toBeLessThanOrEqual(written);
      const fill = await restored.platform.ctx.db
        .selectFrom('executions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', 'acc_fill')
        .executeTakeFirstOrThrow();
      expect(Number(fill.n)).toBe(500);
      // The other process's rows up to some point of its run: a consistent cut, not a torn copy.
      const child = await restored.platform.ctx.db
        .selectFrom('executions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', 'acc_child')
        .executeTakeFirstOrThrow();
      expect(Number(child.n)).toBeGreaterThanOrEqual(100);
      expect(Number(child.n)).toBeLessThanOrEqual(otherWrote);
      expect(Number(child.n) % 20).toBe(0);
    } finally {
      await restored.platform.app.close();
    }
  });

  it('refuses to overwrite a backup without --force', async () => {
    lines.length = 0;
    expect(await backupCommand([backupFile], { config: configFor(live), print })).toBe(2);
    expect(lines[0]).toMatch(/exists; pass --force/);
    expect(await backupCommand([backupFile, '--force'], { config: configFor(live), print })).toBe(0);
  });

  it('restore refuses what is not a platform database, with a clear message', async () => {
    const target = path.join(root, 'target');
    const text = path.join(root, 'notes.txt');
    writeFileSync(text, 'hello, not a database\n');
    const foreign = path.join(root, 'foreign.db');
    const other = await openRawSqlite(foreign);
    other.exec('create table t (x integer)');
    other.close();
    const cases: Array<[string, RegExp]> = [
      [path.join(root, 'missing.db'), /no such file/],
      [text, /not a SQLite database/],
      [foreign, /not the platform's \(no kysely_migration table\)/],
    ];
    for (const [file, message] of cases) {
      lines.length = 0;
      expect(await restoreCommand([file], { config: configFor(target), print })).toBe(1);
      expect(lines.join('\n')).toMatch(message);
    }
    lines.length = 0;
    expect(await restoreCommand([], { config: configFor(target), print })).toBe(2);
    expect(lines[0]).toMatch(/^usage: platform restore FILE/);
    lines.length = 0;
    expect(await backupCommand([backupFile, '--forse'], { config: configFor(target), print })).toBe(2);
    expect(lines[0]).toMatch(/^usage: platform backup FILE/);
  });

  it('restore over an existing database needs --force, and refuses while a server holds it', async () => {
    const config = configFor(live);
    lines.length = 0;
    expect(await restoreCommand([backupFile], { config, print })).toBe(2);
    expect(lines[0]).toMatch(/exists; pass --force/);
    lines.length = 0;
    expect(await restoreCommand([backupFile, '--force'], { config, print })).toBe(2);
    expect(lines[0]).toMatch(/is in use \(is the server running\?\)/);
    // The refusal left the running server's database alone.
    expect((await keyNames(running.platform, running.key)).length).toBeGreaterThan(5);

    await running.platform.app.close();
    lines.length = 0;
    expect(await restoreCommand([backupFile, '--force'], { config, print })).toBe(0);
    // The owner's key of the backup: the restored database has no first start to make another.
    running = { platform: (await start(live)).platform, key: running.key };
    expect(await keyNames(running.platform, running.key)).toContain('before-0');
  });

  it('on PostgreSQL: the pg_dump advice with the database name, and exit 2', async () => {
    const config = configFor(':memory:', { DATABASE_URL: 'postgres://ops:s3cret@db.internal:5432/shop' });
    for (const command of [backupCommand, restoreCommand]) {
      lines.length = 0;
      expect(await command([backupFile], { config, print })).toBe(2);
      const out = lines.join('\n');
      expect(out).toMatch(/pg_dump --format=custom/);
      expect(out).toMatch(/pg_restore/);
      expect(out).toContain('database: shop');
      expect(out).not.toContain('s3cret');
    }
  });
});
