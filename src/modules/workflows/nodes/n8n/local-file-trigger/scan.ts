import { lstat, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { IgnorePattern } from './ignore-pattern.js';
import { isInside } from './watch-path.js';

/**
 * One listing of a watched folder (or file): symbolic links reported as themselves, never followed,
 * at most `MAX_ENTRIES` entries. Triggers watching the same path with the same depth and pattern share
 * a listing that is under way, so several of them cost one walk (readdir and lstat go through libuv's
 * four threads, which DNS lookups and every other file access also wait for).
 */

export interface Entry {
  dir: boolean;
  mtimeMs: number;
  size: number;
}

export interface ScanSpec {
  /** The real path of the account's folder: nothing outside it is read. */
  root: string;
  /** The absolute path watched (inside `root`). */
  target: string;
  kind: 'folder' | 'file';
  /** Levels below the folder looked into (-1: all, 0: its own entries only). */
  depth: number;
  ignored: IgnorePattern | null;
}

export interface Listing {
  /** By path relative to the target (read-only: listings are shared). */
  entries: ReadonlyMap<string, Entry>;
  /** More than MAX_ENTRIES: the rest was not looked at. */
  truncated: boolean;
  /**
   * What fs.watch may watch: the real paths of the folders whose entries were listed, the target first;
   * for a file, its folder; for a target not there yet, the nearest folder above it that is.
   */
  folders: ReadonlyArray<{ path: string; level: number }>;
  /** How long the walk took (later scans are spaced by it). */
  ms: number;
}

/** Entries one scan lists; past it the rest of the tree is not looked at (and the log says so). */
export const MAX_ENTRIES = 20_000;

async function walk(o: ScanSpec): Promise<Omit<Listing, 'ms'>> {
  const entries = new Map<string, Entry>();
  const folders: Array<{ path: string; level: number }> = [];
  const info = await lstat(o.target).catch(() => null);
  // Not there yet: the nearest folder that is tells when it comes (otherwise only the periodic scan).
  if (!info) return { entries, truncated: false, folders: await nearestFolder(o.root, o.target) };
  // The watched path itself may not be (or pass through) a link leading out of the account's folder.
  const real = await realpath(o.target);
  if (!isInside(o.root, real))
    throw new Error('the watched path leads outside the account’s files folder through a symbolic link');
  if (o.kind === 'file' || !info.isDirectory()) {
    if (!info.isDirectory()) entries.set('', { dir: false, mtimeMs: info.mtimeMs, size: info.size });
    // A file's changes show in its folder.
    return { entries, truncated: false, folders: await nearestFolder(o.root, o.target) };
  }
  let truncated = false;
  const list = async (dir: string, level: number): Promise<void> => {
    folders.push({ path: path.join(real, dir), level });
    const found = await readdir(path.join(real, dir), { withFileTypes: true }).catch(() => []);
    for (const d of found) {
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
      if (isDir && (o.depth < 0 || level < o.depth)) await list(rel, level + 1);
    }
  };
  await list('', 0);
  return { entries, truncated, folders };
}

/** The closest folder above `target` that exists, inside `root` (none when it leads outside). */
async function nearestFolder(root: string, target: string): Promise<Array<{ path: string; level: number }>> {
  for (let at = path.dirname(target); isInside(root, at); at = path.dirname(at)) {
    const info = await lstat(at).catch(() => null);
    if (!info) continue;
    if (!info.isDirectory()) return [];
    const real = await realpath(at);
    return isInside(root, real) ? [{ path: real, level: 0 }] : [];
  }
  return [];
}

const underWay = new Map<string, { startedAt: number; listing: Promise<Listing> }>();

/**
 * The listing of `o`: one under way for the same path, depth and pattern when it started at or after
 * `since` (performance.now() time; a change seen at `since` must be in it), else a new one.
 */
export function scan(o: ScanSpec, since: number): Promise<Listing> {
  const key = JSON.stringify([o.root, o.target, o.kind, o.depth, o.ignored?.source ?? null]);
  const current = underWay.get(key);
  if (current && current.startedAt >= since) return current.listing;
  const startedAt = performance.now();
  const listing = walk(o).then((l) => ({ ...l, ms: performance.now() - startedAt }));
  const mine = { startedAt, listing };
  underWay.set(key, mine);
  const done = () => {
    if (underWay.get(key) === mine) underWay.delete(key);
  };
  listing.then(done, done);
  return listing;
}
