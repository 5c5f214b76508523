import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { buildApp, type Platform } from '../../../src/app.js';
import { parseConfig } from '../../../src/config.js';
import type { PlatformModule } from '../../../src/core/context.js';
import { type DatabaseHandle, openDatabase } from '../../../src/core/db/database.js';
import type { Dialect } from '../../../src/core/db/types.js';
import { PG_URL, REDIS_URL, uniqueName } from '../../helpers/services.js';

/**
 * One database (a SQLite file or a PostgreSQL schema) that several "processes" open with
 * their own handles, as separate servers and the CLI would.
 */
export class SharedDatabase {
  private readonly handles: DatabaseHandle[] = [];
  private readonly apps: Platform[] = [];
  private readonly dir: string | null;
  private readonly schema: string | null;

  constructor(readonly dialect: Dialect) {
    this.dir = dialect === 'sqlite' ? mkdtempSync(path.join(tmpdir(), 'platform-shared-')) : null;
    this.schema = dialect === 'postgres' ? uniqueName('shared') : null;
  }

  async open(): Promise<DatabaseHandle> {
    const handle = await openDatabase({
      databaseUrl: this.dialect === 'postgres' ? PG_URL : '',
      dataDir: this.dir ?? ':memory:',
      ...(this.schema ? { pgSchema: this.schema, pgPoolSize: 3 } : {}),
    });
    this.handles.push(handle);
    return handle;
  }

  /** A platform process on this database. */
  async app(
    env: Record<string, string> = {},
    options: { redis?: boolean; modules?: readonly PlatformModule[] } = {},
  ): Promise<Platform> {
    const config = parseConfig({
      DATA_DIR: this.dir ?? ':memory:',
      LOG_LEVEL: 'silent',
      AUTH_FAILURES_PER_IP: '100000',
      ...(options.redis ? { REDIS_URL } : {}),
      ...env,
    });
    const platform = await buildApp({
      config,
      database: await this.open(),
      logger: false,
      ...(options.modules ? { modules: options.modules } : {}),
    });
    await platform.app.ready();
    this.apps.push(platform);
    return platform;
  }

  async close(): Promise<void> {
    for (const { app } of this.apps) await app.close();
    const [first] = this.handles;
    if (first && this.schema)
      await sql`drop schema if exists ${sql.id(this.schema)} cascade`.execute(first.db);
    for (const handle of this.handles) await handle.close().catch(() => undefined); // some tests close their own
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}
