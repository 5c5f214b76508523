import pg from 'pg';
import { PG_URL, pooledSchemaPrefix } from './services.js';

/**
 * Drops the PostgreSQL schemas the test platforms of this Vitest run kept for reuse
 * (test/helpers/databases.ts), and those of earlier runs whose process is gone (killed before its
 * teardown). Without PostgreSQL there is nothing to drop.
 */
async function dropPooledSchemas(which: (pid: number) => boolean): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
  } catch {
    return;
  }
  try {
    const { rows } = await client.query<{ name: string }>(
      `select nspname as name from pg_namespace where nspname ~ '^tp_[0-9]+_[0-9a-f]+$'`,
    );
    for (const { name } of rows) {
      const pid = Number(name.split('_')[1]);
      if (name.startsWith(`${pooledSchemaPrefix(pid)}_`) && which(pid))
        await client.query(`drop schema if exists "${name}" cascade`);
    }
  } finally {
    await client.end();
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export async function setup(): Promise<void> {
  await dropPooledSchemas((pid) => pid !== process.pid && !alive(pid));
}

export async function teardown(): Promise<void> {
  await dropPooledSchemas((pid) => pid === process.pid);
}
