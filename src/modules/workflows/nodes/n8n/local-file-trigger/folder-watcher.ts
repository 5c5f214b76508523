import { FolderWatches, MAX_FOLDER_WATCHES } from './folder-watches.js';
import { type Entry, MAX_ENTRIES, type ScanSpec, scan } from './scan.js';

/**
 * A folder (or one file) watched by comparing listings: each scan lists the tree (symbolic links
 * reported as themselves, never followed) and compares it with the last one, so events are the ones
 * chokidar names — add, change, unlink, addDir, unlinkDir — and a burst of writes to one file between
 * two scans is one event. `fs.watch` only wakes a scan early; a periodic scan catches what it misses
 * (and is all there is with `usePolling`). Every part is bounded: entries per scan, events per second,
 * folders watched (folder-watches.ts), and the time spent scanning: scans are spaced by at least four
 * times the last one's length (a fifth of the time at most) and by 1 s per 2,000 entries listed.
 */

export type FileEvent = 'add' | 'change' | 'unlink' | 'addDir' | 'unlinkDir';

export interface WatcherOptions extends ScanSpec {
  events: ReadonlySet<FileEvent>;
  /** Report a file's add/change only once its size and time stayed the same for `STABLE_MS`. */
  awaitWriteFinish: boolean;
  usePolling: boolean;
  /** One event (`rel`: path relative to `target`; `stat`: the entry as last seen, for dedupe keys). */
  onEvent(event: FileEvent, rel: string, stat: Entry): Promise<void>;
  /** Events left out (past the rate), and scans cut short (past the entry bound): said once each time. */
  onDropped(count: number, why: string): void;
  /** The watch cannot go on (the folder became a link leading out). */
  onFailed(error: Error): void;
  now?: () => number;
}

/** Events per second the trigger starts executions for (with a burst of `BURST`); the rest are dropped. */
export const EVENTS_PER_SECOND = 20;
const BURST = 100;
export const BURST_FOR_TESTS = BURST;
/** How long a written file must stay unchanged before awaitWriteFinish reports it (chokidar's 2 s). */
export const STABLE_MS = 2_000;
/** Scans: after an fs.watch hint, with polling, as a safety net without it, while a write settles. */
const HINT_DELAY_MS = 100;
const POLL_MS = 1_000;
const SAFETY_MS = 5_000;
const SETTLE_MS = 500;
/** Scanning takes at most a fifth of a trigger's time; a large tree is polled less often. */
const SPACING_FACTOR = 4;
const MS_PER_ENTRY = 0.5;

export interface FolderWatcher {
  /** Resolves once the first listing is taken (what exists then is not reported, as n8n's ignoreInitial). */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** The time to the next periodic scan after one that took `ms` and listed `entries`. */
export function periodicDelay(usePolling: boolean, ms: number, entries: number): number {
  return Math.max(usePolling ? POLL_MS : SAFETY_MS, SPACING_FACTOR * ms, entries * MS_PER_ENTRY);
}

export function watchFolder(o: WatcherOptions): FolderWatcher {
  const now = o.now ?? Date.now;
  let last: ReadonlyMap<string, Entry> = new Map();
  /** Writes waiting to settle (awaitWriteFinish): the event, the entry as last seen, since when. */
  const settling = new Map<string, { event: 'add' | 'change'; entry: Entry; since: number }>();
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  /** When the first hint since the last scan came (performance.now()); null: none. */
  let hintedAt: number | null = null;
  let tokens = BURST;
  let refilledAt = now();
  /** The last listing's cost: how long it took and how many entries it held. */
  let lastMs = 0;
  let lastSize = 0;
  let saidUnwatched = false;
  /** One scan at a time: a second one would compare against a listing about to be replaced. */
  let scanning = false;
  const watches = o.usePolling
    ? null
    : new FolderWatches(() => {
        // A hint only: the next scan says what changed (a flood of hints is one scan).
        if (hintedAt !== null || closed) return;
        hintedAt = performance.now();
        // During a scan, its end schedules the next one.
        if (!scanning) schedule(Math.max(HINT_DELAY_MS, SPACING_FACTOR * lastMs));
      });

  const allow = (): boolean => {
    const t = now();
    tokens = Math.min(BURST, tokens + ((t - refilledAt) / 1_000) * EVENTS_PER_SECOND);
    refilledAt = t;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };

  const same = (a: Entry, b: Entry) => a.mtimeMs === b.mtimeMs && a.size === b.size;

  const compare = (next: ReadonlyMap<string, Entry>): Array<[FileEvent, string, Entry]> => {
    const out: Array<[FileEvent, string, Entry]> = [];
    for (const [rel, entry] of next) {
      const before = last.get(rel);
      if (before && before.dir !== entry.dir) {
        out.push([before.dir ? 'unlinkDir' : 'unlink', rel, before]);
        out.push([entry.dir ? 'addDir' : 'add', rel, entry]);
      } else if (!before) out.push([entry.dir ? 'addDir' : 'add', rel, entry]);
      else if (!entry.dir && !same(before, entry)) out.push(['change', rel, entry]);
    }
    for (const [rel, before] of last)
      if (!next.has(rel)) out.push([before.dir ? 'unlinkDir' : 'unlink', rel, before]);
    return out;
  };

  const report = async (events: Array<[FileEvent, string, Entry]>) => {
    let dropped = 0;
    for (const [event, rel, entry] of events) {
      if (!o.events.has(event)) continue;
      if (!allow()) {
        dropped++;
        continue;
      }
      await o.onEvent(event, rel, entry);
    }
    if (dropped > 0) o.onDropped(dropped, `more than ${EVENTS_PER_SECOND} file events a second`);
  };

  const settle = (changes: Array<[FileEvent, string, Entry]>, next: ReadonlyMap<string, Entry>) => {
    const t = now();
    const ready: Array<[FileEvent, string, Entry]> = [];
    for (const change of changes) {
      const [event, rel, entry] = change;
      if (event === 'add' || event === 'change') {
        const pending = settling.get(rel);
        settling.set(rel, { event: pending?.event ?? event, entry, since: t });
      } else if (event === 'unlink' && settling.get(rel)?.event === 'add') settling.delete(rel);
      else ready.push(change);
    }
    for (const [rel, pending] of settling) {
      const seen = next.get(rel);
      if (!seen) {
        settling.delete(rel);
        continue;
      }
      if (!same(seen, pending.entry)) settling.set(rel, { ...pending, entry: seen, since: t });
      else if (t - pending.since >= STABLE_MS) {
        settling.delete(rel);
        ready.push([pending.event, rel, seen]);
      }
    }
    return ready;
  };

  const schedule = (ms: number) => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(tick, ms);
    timer.unref();
  };

  /** A periodic scan may share a listing under way (a change it misses is seen by the next one). */
  const once = async (first: boolean, since: number) => {
    const listing = await scan(o, since);
    if (closed) return;
    const { entries, truncated } = listing;
    lastMs = listing.ms;
    lastSize = entries.size;
    if (truncated)
      o.onDropped(0, `the folder holds more than ${MAX_ENTRIES} entries: the rest is not watched`);
    if (watches) {
      const left = watches.update(listing.folders);
      if (left > 0 && !saidUnwatched) {
        saidUnwatched = true;
        o.onDropped(0, `${left} folders are past the ${MAX_FOLDER_WATCHES} watched: periodic scans see them`);
      }
    }
    if (!first) {
      const changes = compare(entries);
      await report(o.awaitWriteFinish ? settle(changes, entries) : changes);
    }
    last = entries;
  };

  const periodic = () => periodicDelay(o.usePolling, lastMs, lastSize);

  /** After a scan: sooner when a hint came meanwhile or a write is settling. */
  const scheduleNext = () => {
    if (hintedAt !== null) schedule(Math.max(HINT_DELAY_MS, SPACING_FACTOR * lastMs));
    else if (settling.size > 0) schedule(Math.max(SETTLE_MS, SPACING_FACTOR * lastMs));
    else schedule(periodic());
  };

  const tick = () => {
    if (scanning) return;
    const since = hintedAt ?? Number.NEGATIVE_INFINITY;
    hintedAt = null;
    scanning = true;
    running = once(false, since)
      .catch((err: unknown) => {
        closed = true;
        o.onFailed(err instanceof Error ? err : new Error(String(err)));
      })
      .finally(() => {
        scanning = false;
        if (!closed) scheduleNext();
      });
  };

  scanning = true;
  const ready = once(true, performance.now()).finally(() => {
    scanning = false;
  });
  void ready.then(scheduleNext, () => undefined);

  return {
    ready,
    async close() {
      closed = true;
      clearTimeout(timer);
      watches?.close();
      await ready.catch(() => undefined);
      await running;
    },
  };
}
