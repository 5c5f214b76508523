import { type Kysely, sql } from 'kysely';
import type { Database } from './types.js';

/**
 * Tables whose rows are locked this way (each has `id`), and the column the no-op update writes to
 * itself: `updated_at`, or another column outside any key where a table has none. Never a key
 * column: PostgreSQL then takes FOR NO KEY UPDATE, which inserts referencing the row (their foreign
 * key checks' KEY SHARE) do not wait for.
 */
const NO_OP_COLUMN = {
  // An account-wide cap (flows) or one under the account with no row of its own (a customer's blends).
  accounts: 'created_at',
  agents: 'updated_at',
  carts: 'updated_at',
  conversations: 'updated_at',
  credentials: 'updated_at',
  // A Flowise record whose body is read, changed and written back (a document store's loaders).
  flowise_objects: 'updated_at',
  workflows: 'updated_at',
} as const;

export type LockableTable = keyof typeof NO_OP_COLUMN;

/**
 * Locks a row for the rest of the transaction `trx` with a no-op update: PostgreSQL's row lock,
 * SQLite's write lock (its transactions are serial), one statement for both. Reads and writes made
 * after it in `trx` see what racing transactions committed, and those wait for this one: the
 * read-then-write of a cap, a list or a state cannot interleave.
 */
export async function lockRow(trx: Kysely<Database>, table: LockableTable, id: string): Promise<void> {
  const column = sql.ref(NO_OP_COLUMN[table]);
  await sql`update ${sql.table(table)} set ${column} = ${column} where id = ${id}`.execute(trx);
}
