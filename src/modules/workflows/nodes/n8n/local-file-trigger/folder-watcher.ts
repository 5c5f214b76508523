import { type FSWatcher, watch } from 'node:fs';
import { lstat, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { IgnorePattern } from './ignore-pattern.js';
import { isInside } from './watch-path.js';

/**
 * A folder (or one file) watched by comparing listings: each scan lists the tree (symbolic links
 * reported as themselves, never followed) and compares it with the last one, so events are the ones
 * chokidar names — add, change, unlink, addDir, unlinkDir — and a burst of writes to one file between
 * two scans is one event. `fs.watch` only wakes a scan early; a periodic scan catches what it misses
 * (and is all there is with `usePolling`). Every part is bounded: entries per scan, events per second.
 */

export type FileEvent = 'add' | 'change' | 'unlink' | 'addDir' | 'unlinkDir';

interface Entry {
  dir: boolean;
  mtimeMs: number;
  size: number;
}

export interface WatcherOptions {
  /** The real path of the account's folder: nothing outside it is read. */
  root: string;
  /** The absolute path watched (inside `root`). */
  target: string;
  /** A folder (its tree) or one file. */
  kind: 'folder' | 'file';
  events: ReadonlySet<FileEvent>;
  /** Levels below the folder looked into (-1: all, 0: its own entries only). */
  depth: number;
  ignored: IgnorePattern | null;
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

/** Entries one scan lists; past it the rest of the tree is not looked at (and the log says so). */
export const MAX_ENTRIES = 20_000;
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

async function scan(o: WatcherOptions): Promise<{ entries: Map<string, Entry>; truncated: boolean }> {
  const entries = new Map<string, Entry>();
  const info = await lstat(o.target).catch(() => null);
  if (!info) return { entries, truncated: false };
  // The watched path itself may not be (or pass through) a link leading out of the account's folder.
  const real = await realpath(o.target);
  if (!isInside(o.root, real))
    throw new Error('the watched path leads outside the account’s files folder through a symbolic link');
  if (o.kind === 'file' || !info.isDirectory()) {
    if (!info.isDirectory()) entries.set('', { dir: false, mtimeMs: info.mtimeMs, size: info.size });
    return { entries, truncated: false };
  }
  let truncated = false;
  const walk = async (dir: string, level: number): Promise<void> => {
    const list = await readdir(path.join(real, dir), { withFileTypes: true }).catch(() => []);
    for (const d of list) {
      if (entries.size >= MAX_ENTRIES) {
        truncated = true;
        return;
      }
      const rel = dir === '' ? d.name : `${dir}/${d.name}`;
      const isDir = d.isDirectory();
      if (o.ignored?.ignores(path.posix.join(o.target, rel), isDir)) continue;
      const st = await lstat(path.join(real, rel)).catch(() => null);
      if (!st) continue;
      entries.set(rel, { dir: isDir, mtimeMs: st.mtimeMs, size: isDir ? 0 : st.size });
      if (isDir && (o.depth < 0 || level < o.depth)) await walk(rel, level + 1);
    }
  };
  await walk('', 0);
  return { entries, truncated };
}

export interface FolderWatcher {
  /** Resolves once the first listing is taken (what exists then is not reported, as n8n's ignoreInitial). */
  ready: Promise<void>;
  close(): Promise<void>;
}

export function watchFolder(o: WatcherOptions): FolderWatcher {
  const now = o.now ?? Date.now;
  let last = new Map<string, Entry>();
  /** Writes waiting to settle (awaitWriteFinish): the event, the entry as last seen, since when. */
  const settling = new Map<string, { event: 'add' | 'change'; entry: Entry; since: number }>();
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let hinted = false;
  let tokens = BURST;
  let refilledAt = now();
  let fsWatcher: FSWatcher | null = null;

  const allow = (): boolean => {
    const t = now();
    tokens = Math.min(BURST, tokens + ((t - refilledAt) / 1_000) * EVENTS_PER_SECOND);
    refilledAt = t;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };

  const same = (a: Entry, b: Entry) => a.mtimeMs === b.mtimeMs && a.size === b.size;

  const compare = (next: Map<string, Entry>): Array<[FileEvent, string, Entry]> => {
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

  const settle = (changes: Array<[FileEvent, string, Entry]>, next: Map<string, Entry>) => {
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

  const once = async (first: boolean) => {
    const { entries, truncated } = await scan(o);
    if (truncated)
      o.onDropped(0, `the folder holds more than ${MAX_ENTRIES} entries: the rest is not watched`);
    if (!first) {
      const changes = compare(entries);
      await report(o.awaitWriteFinish ? settle(changes, entries) : changes);
    }
    last = entries;
  };

  const tick = () => {
    hinted = false;
    running = once(false)
      .catch((err: unknown) => {
        closed = true;
        o.onFailed(err instanceof Error ? err : new Error(String(err)));
      })
      .finally(() => {
        if (closed) return;
        schedule(settling.size > 0 ? SETTLE_MS : o.usePolling ? POLL_MS : SAFETY_MS);
      });
  };

  const ready = once(true).then(() => {
    if (closed) return;
    if (!o.usePolling) {
      const watched = o.kind === 'file' ? path.dirname(o.target) : o.target;
      try {
        fsWatcher = watch(
          watched,
          { persistent: false, recursive: o.kind === 'folder' && o.depth !== 0 },
          () => {
            // A hint only: the next scan says what changed (a flood of hints is one scan).
            if (hinted || closed) return;
            hinted = true;
            schedule(HINT_DELAY_MS);
          },
        );
        fsWatcher.on('error', () => {
          fsWatcher?.close();
          fsWatcher = null;
        });
      } catch {
        // Missing folder or no inotify: the periodic scans still see every change.
        fsWatcher = null;
      }
    }
    schedule(o.usePolling ? POLL_MS : SAFETY_MS);
  });

  return {
    ready,
    async close() {
      closed = true;
      clearTimeout(timer);
      fsWatcher?.close();
      await ready.catch(() => undefined);
      await running;
    },
  };
}
