import { type Kysely, sql } from 'kysely';
import type { Database } from './types.js';

/** Tables whose rows are locked this way: each has `id` and `updated_at`. */
export type LockableTable = 'agents' | 'carts' | 'conversations' | 'credentials' | 'workflows';

/**
 * Locks a row for the rest of the transaction `trx` with a no-op update: PostgreSQL's row lock,
 * SQLite's write lock (its transactions are serial), one statement for both. Reads and writes made
 * after it in `trx` see what racing transactions committed, and those wait for this one: the
 * read-then-write of a cap, a list or a state cannot interleave.
 */
export async function lockRow(trx: Kysely<Database>, table: LockableTable, id: string): Promise<void> {
  await sql`update ${sql.table(table)} set updated_at = updated_at where id = ${id}`.execute(trx);
}
