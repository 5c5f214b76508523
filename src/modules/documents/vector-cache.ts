/**
 * The vectors of each (account, topic) in an in-process index (vector-index.ts), and its chunks' terms in
 * a keyword index beside it (keyword-index.ts: every indexed chunk, embedded or not), kept in step with
 * the database across processes: every query reads the topic's version (count, chunks and newest change of
 * its indexed documents: one small aggregate). When it moved, the list of indexed documents is read and
 * compared with what the index holds: only documents added, changed or gone are loaded or removed, so one
 * new document in a topic of 100k chunks costs its own chunks, not a reload. A topic not held (first
 * query, or evicted) is built aside a page at a time, with a turn of the event loop between pages, and goes
 * live when complete; concurrent queries of a topic share one load. Changes apply in one synchronous step,
 * so a search never sees half of one.
 *
 * Memory is bounded: past `maxBytes` (vectors at 4 bytes a float, plus the keyword postings), the topics used least recently are
 * dropped, and rebuilt when asked for again. Topics a running query uses (`pin`) are never dropped, so a
 * query larger than the bound is still served (and holds memory past it until it ends).
 *
 * The bound is shared fairly: an account may hold more than `accountShare` of it only while the cache
 * has room. Past the bound, the topics of accounts over their share go first (least recently used
 * first); an account over its share never pushes another account's topic out: its own topic just
 * loaded stays for the query that asked and is dropped when that query ends.
 */
import { KeywordIndex, type KeywordItem } from './keyword-index.js';
import type { DocumentStore } from './store.js';
import type { TopicSnapshots } from './topic-snapshot.js';
import type { RankedChunk } from './types.js';
import { VectorIndex, type VectorItem } from './vector-index.js';

/** Chunks (terms and vectors) read per page when a topic is loaded: a few milliseconds each. */
const LOAD_PAGE = 1_000;

/**
 * A topic is saved once it has not changed for this long: a bulk ingest changes it after every document,
 * and each save writes the whole topic.
 */
const SNAPSHOT_DELAY_MS = 10_000;

/** A turn of the event loop between pages of a load. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

interface HeldDocument {
  /** Changes whenever the document's chunks may have (revision, updated_at, chunk count, model). */
  stamp: string;
  model: string | null;
  ids: string[];
}

interface HeldTopic {
  /** The topic version the index holds; '' when told to look again. */
  version: string;
  documents: Map<string, HeldDocument>;
  /** Order of last use, for eviction. */
  used: number;
  /** The embedding model of its first embedded document (documents in id order). */
  model: string | null;
  /** Changes applied to it, and how many of them its snapshot on disk holds. */
  changes: number;
  saved: number;
}

export class VectorCache {
  private readonly index = new VectorIndex();
  private readonly keywords = new KeywordIndex();
  private readonly topics = new Map<string, HeldTopic>();
  private readonly loading = new Map<string, Promise<void>>();
  /** Running queries per key: their topics stay held until they end. */
  private readonly pins = new Map<string, number>();
  private clock = 0;
  private closed = false;
  /** Topics with a background refresh scheduled, and the refreshes running (awaited by `close`). */
  private readonly refreshing = new Set<string>();
  private readonly background = new Set<Promise<unknown>>();
  /** Snapshot writes waiting for their topic to be quiet. */
  private readonly snapshotTimers = new Map<string, NodeJS.Timeout>();
  /** Topics loaded from a snapshot (for tests and figures). */
  snapshotLoads = 0;

  constructor(
    private readonly store: DocumentStore,
    private readonly maxBytes: number,
    /** The share of `maxBytes` (0–1] an account may hold when the cache is full. */
    private readonly accountShare = 1,
    /** Where topics are saved and loaded from at start (topic-snapshot.ts); null: never saved. */
    private readonly snapshots: TopicSnapshots | null = null,
    /** How long a topic stays unchanged before it is saved. */
    private readonly snapshotDelayMs = SNAPSHOT_DELAY_MS,
  ) {}

  key(accountId: string, topic: string): string {
    return `${accountId}\u0000${topic}`;
  }

  /**
   * Another request of this process changed the topic: a topic held is brought up to date in the
   * background (its changed documents only), so the query after an ingest finds it in step instead of
   * loading what the ingest wrote. One refresh per topic at a time; a query meanwhile shares it.
   */
  invalidate(accountId: string, topic: string): void {
    const key = this.key(accountId, topic);
    const held = this.topics.get(key);
    if (!held) return;
    held.version = '';
    if (this.closed || this.refreshing.has(key)) return;
    this.refreshing.add(key);
    setImmediate(() => {
      this.refreshing.delete(key);
      if (!this.topics.has(key) || this.closed) return;
      const refresh = this.ensure(accountId, topic).catch(() => undefined);
      this.background.add(refresh);
      void refresh.finally(() => this.background.delete(refresh));
    });
  }

  /**
   * A document of the topic was deleted: the topic's snapshot goes at once (it holds the document's
   * terms and vectors), and a topic held is brought up to date and saved again once quiet.
   */
  async forget(accountId: string, topic: string): Promise<void> {
    const key = this.key(accountId, topic);
    const held = this.topics.get(key);
    // Whatever was saved is gone: the refresh saves the topic again once quiet.
    if (held) held.saved = -1;
    this.invalidate(accountId, topic);
    await this.snapshots?.remove(accountId, topic);
  }

  /** Removes the snapshots of topics with no indexed document (run at start); returns how many went. */
  async prune(): Promise<number> {
    if (!this.snapshots) return 0;
    const live = await this.store.indexedTopics();
    return this.snapshots.prune(live.map((t) => [t.accountId, t.topic] as const));
  }

  /** The topic's index, fresh; returns the topic's embedding model (null when nothing is embedded). */
  async ensure(accountId: string, topic: string): Promise<string | null> {
    const key = this.key(accountId, topic);
    for (;;) {
      const version = await this.store.topicVersion(accountId, topic);
      const held = this.topics.get(key);
      if (held && held.version === version) {
        held.used = ++this.clock;
        return held.model;
      }
      const running = this.loading.get(key);
      if (running) {
        await running;
        continue;
      }
      const load = this.sync(accountId, topic, key, version).finally(() => this.loading.delete(key));
      this.loading.set(key, load);
      await load;
      return this.topics.get(key)?.model ?? null;
    }
  }

  /**
   * Loads the most recently changed topics (of any account) before a query asks, one at a time, while
   * they fit in `share` of the bound (estimated from the chunks loaded so far), so the first query after
   * a start finds its topic held or being loaded. Stops at `close`.
   */
  async warm(topics: number, share: number): Promise<number> {
    let warmed = 0;
    let chunks = 0;
    for (const t of await this.store.recentTopics(topics)) {
      const perChunk = chunks > 0 ? this.bytes() / chunks : 0;
      if (this.closed || this.bytes() + perChunk * t.chunks > this.maxBytes * share) break;
      const release = this.pin([this.key(t.accountId, t.topic)]);
      try {
        await this.ensure(t.accountId, t.topic);
      } finally {
        release();
      }
      if (this.closed || !this.topics.has(this.key(t.accountId, t.topic))) break;
      chunks += this.keywords.size(this.key(t.accountId, t.topic));
      warmed++;
    }
    return warmed;
  }

  /** Stops loads in progress (at their next page), refreshes and warming: the database is about to close. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.snapshotTimers.values()) clearTimeout(timer);
    this.snapshotTimers.clear();
    await Promise.allSettled([...this.background, ...this.loading.values()]);
  }

  /** Keeps the keys from eviction until the returned function is called (once). */
  pin(keys: readonly string[]): () => void {
    for (const key of keys) this.pins.set(key, (this.pins.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const key of keys) {
        const n = (this.pins.get(key) ?? 0) - 1;
        if (n > 0) this.pins.set(key, n);
        else this.pins.delete(key);
      }
      // A topic held past the bound for this query, its account over its share, goes now.
      this.evict(null, true);
    };
  }

  search(keys: string[], vector: number[], k: number): RankedChunk[] {
    const present = keys.filter((key) => this.index.has(key));
    return present.length === 0 ? [] : this.index.search(present, vector, k);
  }

  /** The `k` best chunks of the keys by BM25 for these (stemmed) terms (keyword-index.ts). */
  searchKeywords(keys: string[], terms: readonly string[], k: number): RankedChunk[] {
    return this.keywords.search(keys, terms, k);
  }

  /** Bytes held: vectors (4 a float, with the room kept for growth) and keyword postings. */
  bytes(): number {
    return this.index.floats() * 4 + this.keywords.bytes();
  }

  /** Topics held, for tests and figures. */
  held(): number {
    return this.topics.size;
  }

  /** Brings the key's vectors to the topic's current documents (read after `version`, so never older). */
  private async sync(accountId: string, topic: string, key: string, version: string): Promise<void> {
    const current = await this.store.indexedDocuments(accountId, topic);
    const held = this.topics.get(key);
    const stale = (d: IndexedDocument) => held?.documents.get(d.id)?.stamp !== stampOf(d);
    const changed = current.filter(stale);
    const changedChunks = changed.reduce((n, d) => n + d.chunkCount, 0);
    // A topic not held, or one mostly new, is built aside; otherwise only the difference is read.
    const rebuild = !held || changedChunks > this.keywords.size(key);
    const target = rebuild ? `${key}\u0000loading` : null;
    // A topic not held starts from its snapshot when there is one: only what changed since is read.
    const base = target && !held ? await this.fromSnapshot(accountId, topic, target, current) : null;
    if (target && !base) {
      this.index.drop(target);
      this.index.add(target, []);
      this.index.expect(
        target,
        current.reduce((n, d) => n + d.chunkCount, 0),
      );
      this.keywords.drop(target);
      this.keywords.add(target, []);
    }
    const loaded = new Map<string, HeldDocument>(base ?? []);
    const pending: VectorItem[] = [];
    const pendingTerms: KeywordItem[] = [];
    const toRead = base ? current.filter((d) => !base.has(d.id)) : rebuild ? current : changed;
    for (const doc of toRead) {
      const read: HeldDocument = { stamp: stampOf(doc), model: null, ids: [] };
      let after = -1;
      for (;;) {
        const page = await this.store.indexedChunks(doc.id, after, LOAD_PAGE);
        if (page.last === null) break;
        read.model ??= page.rows.find((r) => r.embedding && r.embedding_model)?.embedding_model ?? null;
        const items = page.rows.flatMap((r) =>
          r.embedding ? [{ id: r.id, vector: VectorIndex.fromBytes(r.embedding) }] : [],
        );
        const terms = page.rows.map((r) => ({ id: r.id, terms: r.terms }));
        for (const row of page.rows) read.ids.push(row.id);
        if (target) {
          this.index.add(target, items);
          this.keywords.add(target, terms);
        } else {
          pending.push(...items);
          pendingTerms.push(...terms);
        }
        after = page.last;
        await nextTurn();
        if (this.closed) throw new Error('the knowledge cache is closed');
        if (!page.more) break;
      }
      loaded.set(doc.id, read);
    }
    // From here to the end nothing awaits: searches see the topic before or after, never between.
    if (target) {
      this.index.move(target, key);
      this.keywords.move(target, key);
      // Loaded from a snapshot with nothing read since: what is on disk is what is held.
      const saved = base && toRead.length === 0 && base.size === current.length ? 1 : 0;
      this.topics.set(key, {
        version,
        documents: loaded,
        used: ++this.clock,
        model: modelOf(loaded),
        changes: 1,
        saved,
      });
      this.snapshotLater(accountId, topic, key);
    } else if (held && this.topics.get(key) === held) {
      const live = new Set(current.map((d) => d.id));
      const gone: string[] = [];
      for (const [id, doc] of held.documents) {
        if (live.has(id) && !loaded.has(id)) continue;
        gone.push(...doc.ids);
        held.documents.delete(id);
      }
      this.index.remove(key, gone);
      this.index.add(key, pending);
      this.keywords.remove(key, gone);
      this.keywords.add(key, pendingTerms);
      for (const [id, doc] of loaded) held.documents.set(id, doc);
      held.version = version;
      held.used = ++this.clock;
      held.model = modelOf(held.documents);
      if (gone.length > 0 || loaded.size > 0) held.changes++;
      this.snapshotLater(accountId, topic, key);
    }
    this.evict(key);
  }

  /**
   * Puts the topic's snapshot under `target` without the documents changed or gone since it was saved;
   * returns the documents it still holds, or null (no snapshot, or one mostly out of date).
   */
  private async fromSnapshot(
    accountId: string,
    topic: string,
    target: string,
    current: readonly IndexedDocument[],
  ): Promise<Map<string, HeldDocument> | null> {
    if (!this.snapshots) return null;
    const snapshot = await this.snapshots.read(accountId, topic).catch(() => null);
    if (!snapshot || this.closed) return null;
    const now = new Map(current.map((d) => [d.id, stampOf(d)]));
    const kept = new Map<string, HeldDocument>();
    const stale: string[] = [];
    for (const doc of snapshot.documents) {
      if (now.get(doc.id) === doc.stamp)
        kept.set(doc.id, { stamp: doc.stamp, model: doc.model, ids: doc.ids });
      else stale.push(...doc.ids);
    }
    if (kept.size === 0) {
      // Nothing in it is current (every document changed or deleted): it only keeps deleted text.
      await this.snapshots.remove(accountId, topic).catch(() => undefined);
      return null;
    }
    this.index.drop(target);
    this.keywords.drop(target);
    this.index.importKey(target, snapshot.vectors);
    this.keywords.importKey(target, snapshot.keywords);
    this.index.remove(target, stale);
    this.keywords.remove(target, stale);
    this.snapshotLoads++;
    return kept;
  }

  /** Saves the topic once it has been quiet for `snapshotDelayMs` (a later change restarts the wait). */
  private snapshotLater(accountId: string, topic: string, key: string): void {
    if (!this.snapshots || this.closed) return;
    const held = this.topics.get(key);
    if (!held || held.saved === held.changes) return;
    clearTimeout(this.snapshotTimers.get(key));
    const timer = setTimeout(() => {
      this.snapshotTimers.delete(key);
      const save = this.saveSnapshot(accountId, topic, key).catch(() => undefined);
      this.background.add(save);
      void save.finally(() => this.background.delete(save));
    }, this.snapshotDelayMs);
    timer.unref();
    this.snapshotTimers.set(key, timer);
  }

  /** Writes what the cache holds of the topic (read in one synchronous step: a consistent copy). */
  private async saveSnapshot(accountId: string, topic: string, key: string): Promise<void> {
    const held = this.topics.get(key);
    // Not while it is being brought up to date (a refresh saves it again when done).
    if (
      !this.snapshots ||
      this.closed ||
      !held ||
      held.saved === held.changes ||
      held.version === '' ||
      this.loading.has(key)
    )
      return;
    const keywords = this.keywords.exportKey(key);
    const vectors = this.index.exportKey(key);
    if (!keywords || !vectors) return;
    const changes = held.changes;
    if (held.documents.size === 0) {
      await this.snapshots.remove(accountId, topic);
    } else {
      const documents = [...held.documents].map(([id, d]) => ({
        id,
        stamp: d.stamp,
        model: d.model,
        ids: d.ids,
      }));
      await this.snapshots.write({ accountId, topic, documents, keywords, vectors });
    }
    held.saved = changes;
  }

  /**
   * Drops topics until everything fits `maxBytes` (never `keep` nor pinned ones): the least recently used
   * topic of an account over its share first, else the least recently used of all; but when `keep`'s
   * account is itself over its share, no other account's topic is dropped for it. `onlyOverShare`: drop
   * only topics of accounts over their share (a share of 1 is no share: nobody is over it).
   */
  private evict(keep: string | null, onlyOverShare = false): void {
    let bytes = this.bytes();
    if (bytes <= this.maxBytes) return;
    const share = this.maxBytes * this.accountShare;
    const perAccount = new Map<string, number>();
    const sizes = new Map<string, number>();
    for (const key of this.topics.keys()) {
      const size = this.index.floatsOf(key) * 4 + this.keywords.bytesOf(key);
      sizes.set(key, size);
      perAccount.set(accountOf(key), (perAccount.get(accountOf(key)) ?? 0) + size);
    }
    const byAge = [...this.topics]
      .filter(([key]) => key !== keep && !this.pins.has(key))
      .sort((a, b) => a[1].used - b[1].used)
      .map(([key]) => key);
    const over = (key: string) => this.accountShare < 1 && (perAccount.get(accountOf(key)) ?? 0) > share;
    while (bytes > this.maxBytes) {
      let victim = byAge.find(over);
      if (victim === undefined) {
        if (onlyOverShare || (keep !== null && over(keep))) return;
        victim = byAge[0];
      }
      if (victim === undefined) return;
      byAge.splice(byAge.indexOf(victim), 1);
      const size = sizes.get(victim) ?? 0;
      this.index.drop(victim);
      this.keywords.drop(victim);
      this.topics.delete(victim);
      bytes -= size;
      perAccount.set(accountOf(victim), (perAccount.get(accountOf(victim)) ?? 0) - size);
    }
  }
}

type IndexedDocument = Awaited<ReturnType<DocumentStore['indexedDocuments']>>[number];

/** What changes whenever a document's chunks may have: its revision, update, chunk count and model. */
function stampOf(d: IndexedDocument): string {
  return `${d.revision}|${d.updatedAt}|${d.chunkCount}|${d.model ?? ''}`;
}

/** The account of a cache key (`key`'s first part). */
function accountOf(key: string): string {
  return key.slice(0, key.indexOf('\u0000'));
}

/** The topic's embedding model: its first embedded document's (documents in id order). */
function modelOf(documents: ReadonlyMap<string, HeldDocument>): string | null {
  let first: [string, string] | null = null;
  for (const [id, doc] of documents)
    if (doc.model && (first === null || id < first[0])) first = [id, doc.model];
  return first?.[1] ?? null;
}
