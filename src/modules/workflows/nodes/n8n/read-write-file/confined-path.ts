import { lstat, mkdir, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { NodeOperationError } from '../../../engine/node-type.js';

/**
 * Paths of Read/Write Files from Disk, confined to one folder (the account's under WORKFLOW_FILES_DIR):
 * a path is read relative to it; `..`, an absolute path elsewhere, or a symbolic link that leads out
 * is refused with a node error, never followed.
 */

/** Most files one read may match, and directory entries one pattern may walk. */
export const MAX_MATCHES = 1_000;
const MAX_WALKED = 20_000;

const refuse = (given: string, why: string) =>
  new NodeOperationError(`Access to '${given}' is not allowed: ${why}`, {
    description:
      'Read/Write Files from Disk reaches only the folder this instance gives it (WORKFLOW_FILES_DIR).',
  });

const inside = (root: string, target: string) => {
  const rel = path.relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/** The absolute, normalised path `given` names inside `root`, or a node error. */
export function lexicalPath(root: string, given: string): string {
  if (given.includes('\0')) throw refuse(given, 'the path holds a NUL character');
  const target = path.resolve(root, given);
  if (!inside(root, target)) throw refuse(given, 'it is outside the allowed folder');
  return target;
}

/** The root, created if missing (an account's folder appears on first use), as its real path. */
export async function realRoot(root: string): Promise<string> {
  await mkdir(root, { recursive: true });
  return realpath(root);
}

/** Refuses `target` if its real location (symbolic links resolved) is outside `root`. */
export async function assertReallyInside(root: string, target: string, given: string): Promise<void> {
  let real: string;
  try {
    real = await realpath(target);
  } catch {
    // Missing: its parent decides (a file about to be written).
    real = path.join(
      await realpath(path.dirname(target)).catch(() => path.dirname(target)),
      path.basename(target),
    );
  }
  if (!inside(root, real)) throw refuse(given, 'a symbolic link leads outside the allowed folder');
}

const hasGlob = (segment: string) => /[*?[\]{}]/.test(segment);

function segmentRegex(segment: string): RegExp {
  let out = '';
  for (const ch of segment) {
    if (ch === '*') out += '[^/]*';
    else if (ch === '?') out += '[^/]';
    else out += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

/**
 * The regular files a selector names (n8n's `fileSelector`: a path, or a pattern with `*`, `?` and
 * `**`), inside `root`, sorted. Symbolic links are not followed while walking; a matched link is
 * resolved and refused if it leads out.
 */
export async function matchFiles(root: string, selector: string): Promise<string[]> {
  const pattern = lexicalPath(root, selector);
  const rel = path.relative(root, pattern);
  const segments = rel === '' ? [] : rel.split(path.sep);
  const firstGlob = segments.findIndex(hasGlob);
  if (firstGlob === -1) {
    const info = await lstat(pattern).catch(() => null);
    if (!info) return [];
    await assertReallyInside(root, pattern, selector);
    return [pattern];
  }
  const base = path.join(root, ...segments.slice(0, firstGlob));
  const rest = segments.slice(firstGlob);
  const found: string[] = [];
  let walked = 0;
  async function walk(dir: string, parts: string[]): Promise<void> {
    if (found.length > MAX_MATCHES) return;
    const [part, ...more] = parts;
    if (part === undefined) return;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    walked += entries.length;
    if (walked > MAX_WALKED)
      throw new NodeOperationError(`The pattern '${selector}' walks more than ${MAX_WALKED} entries`);
    if (part === '**') {
      await walk(dir, more);
      for (const e of entries) if (e.isDirectory()) await walk(path.join(dir, e.name), parts);
      return;
    }
    const re = segmentRegex(part);
    for (const e of entries) {
      if (!re.test(e.name)) continue;
      const full = path.join(dir, e.name);
      if (more.length === 0) {
        if (e.isFile() || e.isSymbolicLink()) found.push(full);
      } else if (e.isDirectory()) await walk(full, more);
    }
  }
  await walk(base, rest);
  if (found.length > MAX_MATCHES)
    throw new NodeOperationError(`The pattern '${selector}' matches more than ${MAX_MATCHES} files`);
  for (const file of found) await assertReallyInside(root, file, path.relative(root, file));
  return found.sort();
}
