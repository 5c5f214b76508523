import type { Kysely } from 'kysely';

/** Stores read per statement while the references are counted. */
const PAGE = 200;

/**
 * A document store's loaders hold references on the documents they name (documents migration 606):
 * the ones saved before count theirs here, one per entry, so the last loader to let go of a shared
 * document deletes it and not the first.
 */
// Migrations take Kysely<unknown>: they must not depend on today's table types.
export async function up(db: Kysely<unknown>): Promise<void> {
  // biome-ignore lint/suspicious/noExplicitAny: a migration names tables as they were then.
  const d = db as Kysely<any>;
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
      const counts = new Map<string, number>();
      for (const id of documentIdsOf(store.body)) counts.set(id, (counts.get(id) ?? 0) + 1);
      for (const [id, n] of counts)
        await d
          .updateTable('documents')
          .set({ holds: n })
          .where('account_id', '=', store.account_id)
          .where('id', '=', id)
          .execute();
    }
    if (stores.length < PAGE) return;
    after = stores.at(-1)?.id ?? after;
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
