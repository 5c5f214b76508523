import { bearerCheck, type FakeServer, json, startFakeServer } from './fake-server.js';

export interface FakeDocs extends FakeServer {
  /** Published pages by path: what the docs platform holds now. */
  pages: Map<string, { path: string; title: string; markdown: string; source: unknown; version: number }>;
}

/**
 * The documentation target (its API is not in the spec; this is the documented shape): `PUT
 * /api/docs/pages {path, title, markdown, source?}` creates (201) or replaces (200) the page at `path`
 * and answers `{path, title, url, version, updatedAt}`; a missing field is 400.
 */
export async function startFakeDocs(options: { token?: string } = {}): Promise<FakeDocs> {
  const pages: FakeDocs['pages'] = new Map();
  const server = await startFakeServer((req) => {
    const denied = bearerCheck(req, options.token);
    if (denied) return denied;
    if (req.method !== 'PUT' || req.path !== '/api/docs/pages') return json(404, { error: 'not found' });
    const b = (req.body ?? {}) as Record<string, unknown>;
    const missing = ['path', 'title', 'markdown'].filter((k) => typeof b[k] !== 'string' || b[k] === '');
    if (missing.length > 0) return json(400, { error: 'invalid page', fields: missing });
    const path = b.path as string;
    const before = pages.get(path);
    const page = {
      path,
      title: b.title as string,
      markdown: b.markdown as string,
      source: b.source ?? null,
      version: (before?.version ?? 0) + 1,
    };
    pages.set(path, page);
    return json(before ? 200 : 201, {
      path,
      title: page.title,
      url: `https://docs.example.com/${path}`,
      version: page.version,
      updatedAt: '2030-01-02T03:04:05.000Z',
    });
  });
  return Object.assign(server, { pages });
}
