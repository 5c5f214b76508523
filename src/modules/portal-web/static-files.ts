import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** Headers of every answer under /portal, errors included: the page runs only its own files. */
export const PORTAL_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

export const INDEX_CACHE_CONTROL = 'no-cache';
export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/** The file types the build writes; any other name is not an asset. */
const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/**
 * A plain file name: letters, digits, `.`, `_`, `-`, not starting with a dot. No separator, no `..`:
 * the name cannot leave the assets folder, whatever the URL decoded to.
 */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

export interface StaticFile {
  body: Buffer;
  contentType: string;
  etag: string;
}

const etagOf = (body: Buffer) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

async function readOrNull(file: string): Promise<Buffer | null> {
  try {
    return await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return null;
    throw error;
  }
}

/** The built portal in one folder: `index.html` and `assets/` with content-hashed names. */
export class PortalFiles {
  private readonly assetsDir: string;
  /** Hashed assets never change under their name: each is read once. */
  private readonly assets = new Map<string, StaticFile>();

  constructor(readonly root: string) {
    this.assetsDir = path.resolve(root, 'assets');
  }

  /** index.html, read on every request so a rebuild shows at once (it is small). */
  async index(): Promise<StaticFile | null> {
    const body = await readOrNull(path.join(this.root, 'index.html'));
    return body && { body, contentType: 'text/html; charset=utf-8', etag: etagOf(body) };
  }

  /** An asset by its file name; null for a name that is not one (traversal included) or a missing file. */
  async asset(name: string): Promise<StaticFile | null> {
    const cached = this.assets.get(name);
    if (cached) return cached;
    if (!ASSET_NAME.test(name)) return null;
    const contentType = TYPES[path.extname(name).toLowerCase()];
    if (!contentType) return null;
    const file = path.resolve(this.assetsDir, name);
    // Defence in depth: the pattern already keeps the name inside the folder.
    if (path.dirname(file) !== this.assetsDir) return null;
    const body = await readOrNull(file);
    if (!body) return null;
    const found = { body, contentType, etag: etagOf(body) };
    // Bounded: only names that exist as files are kept, and a build writes a handful.
    if (this.assets.size < 500) this.assets.set(name, found);
    return found;
  }
}
