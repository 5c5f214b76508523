/**
 * Raw HTTP calls to a testbed over its loopback socket (streams need the real thing), and knowledge-base
 * topics seeded through the platform's own API: shared by the flows and agents suites.
 */
import { expect } from 'vitest';
import type { LlmTestbed } from './support.js';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json(): unknown;
}

/**
 * `key: null` sends no Authorization header (default: the admin key); a string body goes as is (for
 * broken JSON), a FormData body as multipart.
 */
export async function call(
  bed: LlmTestbed,
  method: string,
  path: string,
  options: { body?: unknown; key?: string | null; signal?: AbortSignal } = {},
): Promise<Reply> {
  const key = options.key === undefined ? bed.p.adminKey : options.key;
  const headers: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` };
  let body: string | FormData | undefined;
  if (options.body instanceof FormData) body = options.body;
  else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  }
  const res = await fetch(`${bed.url}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

export interface Doc {
  title: string;
  content: string;
}

/**
 * Loads markdown documents into `topic` and indexes them, through the platform's own API (the admin
 * key holds `docproc`). Returns the document ids, in order.
 */
export async function seedDocs(bed: LlmTestbed, topic: string, docs: Doc[]): Promise<string[]> {
  const ids: string[] = [];
  for (const doc of docs) {
    const loaded = await call(bed, 'POST', '/api/documents/load', {
      body: { source: 'markdown', content: doc.content, title: doc.title, topic },
    });
    expect(loaded.status, loaded.text).toBeLessThan(300);
    const id = (loaded.json() as { id: string }).id;
    const done = await call(bed, 'POST', `/api/documents/${id}/process?wait=true`, { body: {} });
    expect(done.status, done.text).toBe(200);
    expect((done.json() as { status: string }).status).toBe('indexed');
    ids.push(id);
  }
  return ids;
}

/** Makes the next timestamps strictly later (the platform's clock and the wall clock both). */
export async function tick(bed: LlmTestbed, seconds = 1): Promise<void> {
  bed.p.clock.advance(seconds);
  await new Promise((r) => setTimeout(r, 5));
}
