import type { Clock } from '../../../core/clock.js';
import { AppError } from '../../../core/errors.js';
import type { DocumentService } from '../../documents/document-service.js';
import { loadersOf, STORE_TOPIC_PREFIX } from './doc-store.js';
import type { FlowiseObjects } from './objects.js';

/** How often a worker counts the stores' references again (and once when it starts). */
const RECONCILE_EVERY_MS = 60 * 60_000;

/** The references a store's loaders hold, per document id; a store that is gone names none. */
export async function storeReferences(
  objects: FlowiseObjects,
  accountId: string,
  topic: string,
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  try {
    const store = await objects.get(accountId, 'docstore', topic.slice(STORE_TOPIC_PREFIX.length));
    for (const loader of loadersOf(store))
      for (const id of loader.documentIds) counts.set(id, (counts.get(id) ?? 0) + 1);
  } catch (error) {
    if (!(error instanceof AppError && error.status === 404)) throw error;
  }
  return counts;
}

/**
 * A store's documents are held once per loader naming them, but a hold is taken before its loader is
 * saved and given back after it is removed: a process stopped in between (a deploy during an upload)
 * or a database failure leaves a count no loader matches, and the document then outlives the loaders
 * (or goes while one still names it). A worker sets the counts to what the stores name, at its start
 * and hourly, for documents whose holds have not moved for `settleMs`: longer than an upload holds a
 * document its loader does not name yet. Returns the way to stop.
 */
export function reconcileStoreHolds(deps: {
  documents: DocumentService;
  objects: FlowiseObjects;
  clock: Clock;
  settleMs: number;
  onResult: (corrected: number) => void;
  onError: (error: unknown) => void;
}): () => void {
  const run = (): void => {
    const before = new Date(deps.clock.now().getTime() - deps.settleMs).toISOString();
    deps.documents
      .reconcileHolds(STORE_TOPIC_PREFIX, before, (accountId, topic) =>
        storeReferences(deps.objects, accountId, topic),
      )
      .then(deps.onResult, deps.onError);
  };
  const first = setTimeout(run, 0);
  const every = setInterval(run, RECONCILE_EVERY_MS);
  first.unref();
  every.unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}
