import path from 'node:path';

/**
 * Where a Local File Trigger's path lands: inside the account's files folder (WORKFLOW_FILES_DIR), never
 * outside. n8n's exports name paths of n8n's Docker image, whose home is `/home/node` (the `~` of its
 * Execute Command): that home is the account's folder here, as Execute Command's HOME is. A relative path
 * is read from the folder; any other absolute path must already lie inside it.
 */

/** n8n's Docker home, the account's folder here. */
export const N8N_HOME = '/home/node';

/** Longest path accepted. */
const MAX_PATH_LENGTH = 1_024;

const inside = (root: string, target: string) => {
  const rel = path.relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

export type WatchPath = { ok: true; absolute: string } | { ok: false; reason: string };

/** The absolute path `given` names inside `root`, or why it is refused. */
export function watchPathOf(root: string, given: string): WatchPath {
  if (given.trim() === '') return { ok: false, reason: 'the path is empty' };
  if (given.length > MAX_PATH_LENGTH)
    return { ok: false, reason: `the path is over ${MAX_PATH_LENGTH} characters` };
  if (given.includes('\0')) return { ok: false, reason: 'the path holds a NUL character' };
  const normal = path.posix.normalize(given.replace(/^~(?=\/|$)/, N8N_HOME));
  let target: string;
  if (normal === N8N_HOME || normal.startsWith(`${N8N_HOME}/`))
    target = path.join(root, normal.slice(N8N_HOME.length));
  else target = path.resolve(root, normal);
  if (!inside(root, target))
    return { ok: false, reason: "it is outside the account's files folder (WORKFLOW_FILES_DIR)" };
  return { ok: true, absolute: target };
}

/** Whether `target` lies inside `root` (both real paths). */
export const isInside = inside;
