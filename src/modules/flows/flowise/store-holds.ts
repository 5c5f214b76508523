import type { Clock } from '../../../core/clock.js';
import { AppError } from '../../../core/errors.js';
import type { DocumentsApi, TopicOwner } from '../../documents/index.js';
import { loadersOf, STORE_TOPIC_PREFIX } from './doc-store.js';
import type { FlowiseObjects, StoredObject } from './objects.js';

/** How often a worker counts the stores' references again (and once when it starts). */
const RECONCILE_EVERY_MS = 60 * 60_000;

/**
 * The references a store's loaders hold, per document id, or that it is gone; null when it changed
 * since `before` (a loader removed or replaced gives its holds back after the store is saved: counted
 * in between, a document two loaders name would be set to one hold, and the release would delete it).
 */
export async function storeReferences(
  objects: FlowiseObjects,
  accountId: string,
  topic: string,
  before: string,
): Promise<TopicOwner | null> {
  const references = new Map<string, number>();
  let store: StoredObject;
  try {
    store = await objects.get(accountId, 'docstore', topic.slice(STORE_TOPIC_PREFIX.length));
  } catch (error) {
    if (error instanceof AppError && error.status === 404) return { references, gone: true };
    throw error;
  }
  // Stores saved before the mark came say only when they last changed at all.
  const dropped = store.body.referencesDroppedAt;
  if ((typeof dropped === 'string' ? dropped : store.updatedAt) >= before) return null;
  for (const loader of loadersOf(store))
    for (const id of loader.documentIds) references.set(id, (references.get(id) ?? 0) + 1);
  return { references, gone: false };
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
  documents: DocumentsApi['documents'];
  objects: FlowiseObjects;
  clock: Clock;
  settleMs: number;
  onResult: (result: { corrected: number; deleted: number }) => void;
  onError: (error: unknown) => void;
}): () => void {
  let running = false;
  const run = (): void => {
    // One pass at a time in a process (a pass over many stores may outlast the interval).
    if (running) return;
    running = true;
    const before = new Date(deps.clock.now().getTime() - deps.settleMs).toISOString();
    deps.documents
      .reconcileHolds(STORE_TOPIC_PREFIX, before, (accountId, topic) =>
        storeReferences(deps.objects, accountId, topic, before),
      )
      .then(deps.onResult, deps.onError)
      .finally(() => {
        running = false;
      });
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
