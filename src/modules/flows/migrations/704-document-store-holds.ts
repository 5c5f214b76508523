import type { Kysely } from 'kysely';

/** Stores read per statement while the references are counted. */
const PAGE = 200;
/** Document ids per update (SQLite's bound on a statement's variables is far above). */
const IDS_PER_STATEMENT = 500;

/**
 * A document store's loaders hold references on the documents they name (documents migration 606):
 * the ones saved before count theirs here, one per entry, so the last loader to let go of a shared
 * document deletes it and not the first.
 */
// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  // biome-ignore lint/suspicious/noExplicitAny: a migration names tables as they were then.
  const d = db as Kysely<any>;
  // Counted whole first (a loader names at most a store's files), then written a group of ids with
  // the same account and count per statement, not a statement per document.
  const counts = new Map<string, Map<string, number>>();
  let after = '';
  for (;;) {
    const stores: Array<{ id: string; account_id: string; body: string }> = await d
      .selectFrom('flowise_objects')
      .select(['id', 'account_id', 'body'])
      .where('kind', '=', 'docstore')
      .where('id', '>', after)
      .orderBy('id')
      .limit(PAGE)
      .execute();
    for (const store of stores) {
      const mine = counts.get(store.account_id) ?? new Map<string, number>();
      counts.set(store.account_id, mine);
      for (const id of documentIdsOf(store.body)) mine.set(id, (mine.get(id) ?? 0) + 1);
    }
    if (stores.length < PAGE) break;
    after = stores.at(-1)?.id ?? after;
  }
  for (const [accountId, byDocument] of counts) {
    const byCount = new Map<number, string[]>();
    for (const [id, n] of byDocument) {
      const ids = byCount.get(n) ?? [];
      ids.push(id);
      byCount.set(n, ids);
    }
    for (const [n, ids] of byCount)
      for (let i = 0; i < ids.length; i += IDS_PER_STATEMENT)
        await d
          .updateTable('documents')
          .set({ holds: n })
          .where('account_id', '=', accountId)
          .where('id', 'in', ids.slice(i, i + IDS_PER_STATEMENT))
          .execute();
  }
}

export async function down(): Promise<void> {
  // Nothing to undo: documents migration 606's down drops the column.
}

/** The document ids a stored store body's loaders name (a body that does not parse names none). */
function documentIdsOf(body: string): string[] {
  try {
    const loaders = (JSON.parse(body) as { loaders?: unknown }).loaders;
    if (!Array.isArray(loaders)) return [];
    return loaders.flatMap((l: { documentIds?: unknown }) =>
      Array.isArray(l?.documentIds) ? l.documentIds.filter((id): id is string => typeof id === 'string') : [],
    );
  } catch {
    return [];
  }
}
