import type { Kysely } from 'kysely';

/**
 * Webhook paths belong to one account (`/webhook/{path}` is one namespace for all): the first
 * account to save a workflow with a path holds it until none of its workflows declares it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_claims')
    .addColumn('path', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('claimed_at', 'text', (c) => c.notNull())
    .execute();
  // Existing workflows claim their paths, oldest first (the active holder wins a tie).
  const raw = db as unknown as Kysely<{
    workflows: { account_id: string; nodes: string; active: number; created_at: string };
    webhook_claims: { path: string; account_id: string; claimed_at: string };
  }>;
  const rows = await raw
    .selectFrom('workflows')
    .select(['account_id', 'nodes', 'active', 'created_at'])
    .orderBy('active', 'desc')
    .orderBy('created_at')
    .execute();
  const claimed = new Map<string, { account_id: string; claimed_at: string }>();
  for (const row of rows) {
    let nodes: Array<{ type?: unknown; disabled?: unknown; parameters?: { path?: unknown } }> = [];
    try {
      nodes = JSON.parse(row.nodes);
    } catch {
      continue;
    }
    for (const node of Array.isArray(nodes) ? nodes : []) {
      if (node?.type !== 'webhook' || node.disabled || typeof node.parameters?.path !== 'string') continue;
      const path = node.parameters.path.replace(/^\/+|\/+$/g, '');
      if (!claimed.has(path)) claimed.set(path, { account_id: row.account_id, claimed_at: row.created_at });
    }
  }
  for (const [path, claim] of claimed) {
    await raw
      .insertInto('webhook_claims')
      .values({ path, ...claim })
      .execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_claims').execute();
}
