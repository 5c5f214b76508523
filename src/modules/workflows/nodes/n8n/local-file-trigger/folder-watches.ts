import { type FSWatcher, watch } from 'node:fs';

/**
 * The fs.watch hints of one trigger: one plain (not recursive) watch per listed folder, shallowest
 * first, at most MAX_FOLDER_WATCHES per trigger and WATCHES_PER_PROCESS in the process. Node's
 * recursive watch on Linux adds an inotify watch per file and folder of the whole tree whatever the
 * depth (5,051 for 50 folders of 100 files), and inotify watches are counted per user of the host
 * (`fs.inotify.max_user_watches`), shared with every other process of that user. Folders past the caps
 * are still seen by the periodic scans.
 */

export const MAX_FOLDER_WATCHES = 64;
export const WATCHES_PER_PROCESS = 1_024;

let inProcess = 0;

/** Watches in use in this process (tests). */
export const watchesInProcess = () => inProcess;

export class FolderWatches {
  private readonly open = new Map<string, FSWatcher>();
  private closed = false;

  constructor(private readonly onHint: () => void) {}

  /**
   * Watches `wanted` (real paths with their level below the target) up to the caps, and no other;
   * returns how many were left out.
   */
  update(wanted: ReadonlyArray<{ path: string; level: number }>): number {
    if (this.closed) return 0;
    const chosen = new Set(
      [...wanted]
        .sort((a, b) => a.level - b.level)
        .slice(0, MAX_FOLDER_WATCHES)
        .map((f) => f.path),
    );
    for (const [folder, watcher] of this.open) if (!chosen.has(folder)) this.drop(folder, watcher);
    let left = wanted.length - chosen.size;
    for (const folder of chosen) {
      if (this.open.has(folder)) continue;
      if (inProcess >= WATCHES_PER_PROCESS) {
        left++;
        continue;
      }
      try {
        // A hint only: the next scan says what changed.
        const watcher = watch(folder, { persistent: false }, () => this.onHint());
        watcher.on('error', () => this.drop(folder, watcher));
        this.open.set(folder, watcher);
        inProcess++;
      } catch {
        // Gone since the scan, or no inotify left: the periodic scans still see every change.
        left++;
      }
    }
    return left;
  }

  close(): void {
    this.closed = true;
    for (const [folder, watcher] of this.open) this.drop(folder, watcher);
  }

  private drop(folder: string, watcher: FSWatcher): void {
    if (this.open.get(folder) !== watcher) return;
    this.open.delete(folder);
    inProcess--;
    watcher.close();
  }
}
