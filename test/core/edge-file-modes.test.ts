import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/core/db/database.js';
import { loadSecrets } from '../../src/core/secrets.js';

// Finding 24: platform.db (key hashes, sealed credentials, customer data) and the encryption key
// beside it were created world-readable under the usual umask 022.
const modeOf = (file: string) => statSync(file).mode & 0o777;

describe('data files are readable by the server user only', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a new SQLite database and its WAL files are created 0600', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'edge-modes-'));
    const previous = process.umask(0o022);
    try {
      const handle = await openDatabase({ databaseUrl: '', dataDir: dir });
      await sql`create table t (x integer)`.execute(handle.db);
      await sql`insert into t values (1)`.execute(handle.db);
      const file = path.join(dir, 'platform.db');
      expect(modeOf(file)).toBe(0o600);
      expect(modeOf(`${file}-wal`)).toBe(0o600);
      expect(modeOf(`${file}-shm`)).toBe(0o600);
      await handle.close();
    } finally {
      process.umask(previous);
    }
  });

  it('an existing, world-readable database is tightened to 0600 at open', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'edge-modes-'));
    const file = path.join(dir, 'platform.db');
    writeFileSync(file, '');
    chmodSync(file, 0o644);
    const handle = await openDatabase({ databaseUrl: '', dataDir: dir });
    expect(modeOf(file)).toBe(0o600);
    await handle.close();
  });

  it('a generated encryption key is 0600, and an existing wider one is tightened', () => {
    dir = mkdtempSync(path.join(tmpdir(), 'edge-modes-'));
    const previous = process.umask(0o022);
    try {
      const first = loadSecrets('', dir);
      const file = path.join(dir, 'encryption.key');
      expect(modeOf(file)).toBe(0o600);
      chmodSync(file, 0o644);
      const again = loadSecrets('', dir);
      expect(modeOf(file)).toBe(0o600);
      // Same key material: tightening does not regenerate it.
      expect(again.derive('x').equals(first.derive('x'))).toBe(true);
    } finally {
      process.umask(previous);
    }
  });
});
