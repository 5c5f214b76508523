import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../core/errors.js';
import { createOutboundHttp, OutboundBlockedError, type OutboundHttp } from '../../../core/http/outbound.js';
import { type LoaderDeps, type LoadInput, loadDocument } from './index.js';
import { buildPdf } from './pdf-fixture.js';

const PDF = buildPdf(['Remote page one', 'Remote page two'], 'Remote PDF');
const ARTICLE = `<!DOCTYPE html><html><head><title>Remote article</title></head><body><nav>Menu</nav><main>
<h1>Care guide</h1><p>${'Water the plants in the morning. '.repeat(20)}</p></main></body></html>`;

/** path → [status, headers, body] */
const ROUTES: Record<string, [number, Record<string, string>, string | Buffer]> = {
  '/doc.pdf': [200, { 'content-type': 'application/pdf' }, PDF],
  '/download': [200, { 'content-type': 'application/octet-stream' }, PDF],
  '/article': [200, { 'content-type': 'text/html; charset=utf-8' }, ARTICLE],
  '/untyped-html': [200, {}, `  <!-- generated -->\n${ARTICLE}`],
  '/latin1': [
    200,
    { 'content-type': 'text/plain; charset=iso-8859-1' },
    Buffer.from('Café menu\nCrème brûlée', 'latin1'),
  ],
  '/notes.md': [200, { 'content-type': 'text/plain' }, '# Release notes\n\nFixed things.'],
  '/notes.txt': [200, { 'content-type': 'text/plain' }, '# Not a heading by type\n\nPlain.'],
  '/typed.md': [200, { 'content-type': 'text/markdown' }, '## Typed\n\nBody.'],
  '/image': [
    200,
    { 'content-type': 'image/png' },
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]),
  ],
  '/big': [200, { 'content-type': 'text/plain' }, 'x'.repeat(5000)],
  '/missing': [404, { 'content-type': 'text/plain' }, 'nope'],
  '/broken': [500, {}, 'boom'],
  '/to-article': [302, { location: '/article' }, ''],
  '/to-private': [302, { location: 'http://10.1.2.3/secret' }, ''],
};

let server: Server;
let base: string;
let lastHeaders: IncomingHttpHeaders = {};

beforeAll(async () => {
  server = createServer((req, res) => {
    lastHeaders = req.headers;
    if (req.url === '/slow') {
      setTimeout(() => res.end('late'), 3_000).unref();
      return;
    }
    const route = ROUTES[req.url ?? ''];
    if (route === undefined) {
      res.writeHead(404).end();
      return;
    }
    const [status, headers, body] = route;
    res.writeHead(status, headers).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const deps = (over: Partial<LoaderDeps> = {}): LoaderDeps => ({
  fetch: createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 }),
  maxBytes: 1024 * 1024,
  timeoutMs: 1_000,
  pdf: { timeoutMs: 15_000, maxPages: 20 },
  ...over,
});

async function failure(input: LoadInput, d: LoaderDeps = deps()): Promise<AppError> {
  try {
    await loadDocument(input, d);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected loadDocument to fail');
}

describe('loadDocument: url', () => {
  it('fetches a PDF by Content-Type, sending Accept and a User-Agent naming the platform', async () => {
    const doc = await loadDocument({ source: 'url', url: `${base}/doc.pdf` }, deps());
    expect(doc.mimeType).toBe('application/pdf');
    expect(doc.title).toBe('Remote PDF');
    expect(doc.pages.map((p) => p.text)).toEqual(['Remote page one', 'Remote page two']);
    expect(lastHeaders.accept).toContain('application/pdf');
    expect(lastHeaders['user-agent']).toMatch(/api-platform/);
  });

  it('recognises a PDF by its magic bytes when the type says nothing', async () => {
    const doc = await loadDocument({ source: 'url', url: `${base}/download` }, deps());
    expect(doc.mimeType).toBe('application/pdf');
    expect(doc.pages).toHaveLength(2);
  });

  it('reads HTML by type, by content (after a comment), and after a redirect', async () => {
    for (const path of ['/article', '/untyped-html', '/to-article']) {
      const doc = await loadDocument({ source: 'url', url: `${base}${path}` }, deps());
      expect(doc.mimeType, path).toBe('text/html');
      expect(doc.title).toBe('Remote article');
      expect(doc.pages[0]?.text).toMatch(/^#+ Care guide$/m);
      expect(doc.pages[0]?.text).toContain('Water the plants in the morning.');
    }
  });

  it('decodes the declared charset', async () => {
    const doc = await loadDocument({ source: 'url', url: `${base}/latin1` }, deps());
    expect(doc.mimeType).toBe('text/plain');
    expect(doc.pages[0]?.text).toBe('Café menu\nCrème brûlée');
    expect(doc.title).toBe('Café menu');
  });

  it('treats text as markdown when the type says so or the URL ends in .md', async () => {
    const md = await loadDocument({ source: 'url', url: `${base}/notes.md` }, deps());
    expect(md.mimeType).toBe('text/markdown');
    expect(md.title).toBe('Release notes');
    const typed = await loadDocument({ source: 'url', url: `${base}/typed.md` }, deps());
    expect(typed.mimeType).toBe('text/markdown');
    const txt = await loadDocument({ source: 'url', url: `${base}/notes.txt` }, deps());
    expect(txt.mimeType).toBe('text/plain');
  });

  it('loads a pdf source from a url, and refuses a url that is not a PDF', async () => {
    const doc = await loadDocument({ source: 'pdf', url: `${base}/doc.pdf` }, deps());
    expect(doc.pages).toHaveLength(2);
    const err = await failure({ source: 'pdf', url: `${base}/article` });
    expect(err.code).toBe('UNPROCESSABLE');
  });

  it('refuses binary that is neither text, HTML nor PDF', async () => {
    const err = await failure({ source: 'url', url: `${base}/image` });
    expect(err.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('maps non-2xx answers to 502 with the status', async () => {
    for (const [path, status] of [
      ['/missing', 404],
      ['/broken', 500],
    ] as const) {
      const err = await failure({ source: 'url', url: `${base}${path}` });
      expect(err.code).toBe('UPSTREAM_ERROR');
      expect(err.status).toBe(502);
      expect(err.details).toEqual({ status });
    }
  });

  it('maps a timeout to 504', async () => {
    const err = await failure({ source: 'url', url: `${base}/slow` }, deps({ timeoutMs: 200 }));
    expect(err.code).toBe('GATEWAY_TIMEOUT');
    expect(err.status).toBe(504);
  });

  it('maps a refused connection to 502 without the address', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const err = await failure({ source: 'url', url: `http://127.0.0.1:${port}/x` });
    expect(err.code).toBe('UPSTREAM_ERROR');
    expect(JSON.stringify(err.details)).not.toContain('127.0.0.1');
  });

  it('refuses a response over maxBytes, whether the loader or the client notices', async () => {
    expect((await failure({ source: 'url', url: `${base}/big` }, deps({ maxBytes: 1000 }))).code).toBe(
      'PAYLOAD_TOO_LARGE',
    );
    // The client's own limit, reported as outbound.ts reports it (a fake client: the real one currently
    // resolves an oversized body as an empty 200 and throws the error uncaught; see the loaders report).
    const oversized: OutboundHttp = async () => {
      throw new OutboundBlockedError('Response is larger than 1000 bytes');
    };
    expect((await failure({ source: 'url', url: `${base}/big` }, deps({ fetch: oversized }))).code).toBe(
      'PAYLOAD_TOO_LARGE',
    );
  });

  it('refuses a body shorter than its Content-Length', async () => {
    const truncated: OutboundHttp = async () => ({
      status: 200,
      headers: { 'content-type': 'text/plain', 'content-length': '5000' },
      body: '',
      bytes: Buffer.alloc(0),
    });
    const err = await failure({ source: 'url', url: `${base}/big` }, deps({ fetch: truncated }));
    expect(err.code).toBe('UPSTREAM_ERROR');
    expect(err.details).toEqual({ expectedBytes: 5000, receivedBytes: 0 });
  });

  it('refuses private addresses when they are not explicitly allowed, also behind a redirect', async () => {
    const guarded = deps({ fetch: createOutboundHttp({ allowHosts: [], timeoutMs: 5_000 }) });
    const direct = await failure({ source: 'url', url: `${base}/article` }, guarded);
    expect(direct.code).toBe('FORBIDDEN');
    expect(direct.status).toBe(403);
    expect(direct.message).toMatch(/not allowed/);
    const metadata = await failure(
      { source: 'url', url: 'http://169.254.169.254/latest/meta-data/' },
      guarded,
    );
    expect(metadata.code).toBe('FORBIDDEN');
    const redirected = await failure({ source: 'url', url: `${base}/to-private` });
    expect(redirected.code).toBe('FORBIDDEN');
  });
});
