import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPortal } from '../../scripts/build-portal.mjs';
import { allModules } from '../../src/modules/index.js';
import {
  createPortalWebModule,
  DEFAULT_PORTAL_DIR,
  portalWebModule,
} from '../../src/modules/portal-web/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';

// Serving only: no table is read, so one dialect (SQLite) covers it.
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const SECRET = 'SECRET-OUTSIDE-THE-ASSETS';
const INDEX =
  '<!doctype html><title>portal</title><script type="module" src="/portal/assets/app.ABC123.js"></script>';
const JS = 'console.log("portal");';
const CSS = 'body{color:#111}';

/** A built portal in a temporary folder, with files beside and inside it that must never be served. */
function fixture(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'portal-web-'));
  const dir = path.join(root, 'portal');
  mkdirSync(path.join(dir, 'assets', 'sub'), { recursive: true });
  writeFileSync(path.join(dir, 'index.html'), INDEX);
  writeFileSync(path.join(dir, 'assets', 'app.ABC123.js'), JS);
  writeFileSync(path.join(dir, 'assets', 'app.DEF456.css'), CSS);
  writeFileSync(path.join(dir, 'assets', 'notes.txt'), SECRET);
  writeFileSync(path.join(dir, 'assets', '.hidden.js'), SECRET);
  writeFileSync(path.join(dir, 'assets', 'sub', 'deep.js'), SECRET);
  writeFileSync(path.join(dir, 'secret.js'), SECRET);
  writeFileSync(path.join(root, 'secret.js'), SECRET);
  return dir;
}

/** One request as written, dot segments and all; the status and body of the answer. */
function rawGet(port: number, target: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      text += chunk;
    });
    socket.on('error', reject);
    socket.on('end', () => {
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const status = Number(head.split(' ')[1]);
      // Bodies here are small; a chunked one arrives as one chunk: strip its size lines.
      let body = rest.join('\r\n\r\n');
      if (/transfer-encoding: chunked/i.test(head))
        body = body.replace(/^[0-9a-f]+\r\n|\r\n0\r\n$|\r\n$/gi, '');
      resolve({ status, body });
    });
  });
}

function expectSecurityHeaders(headers: Record<string, unknown>) {
  expect(headers['content-security-policy']).toBe(CSP);
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['referrer-policy']).toBe('no-referrer');
}

describe('portal-web: serving the built portal at /portal', () => {
  let p: TestPlatform;
  let dir: string;
  beforeAll(async () => {
    dir = fixture();
    p = await createTestPlatform({
      dialect: 'sqlite',
      modules: [...allModules.filter((m) => m !== portalWebModule), createPortalWebModule({ dir })],
    });
    await p.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await p?.close();
    rmSync(path.dirname(dir), { recursive: true, force: true });
  });

  it('serves index.html at /portal and /portal/ with no-cache, an ETag and the strict headers, no key needed', async () => {
    for (const url of ['/portal', '/portal/']) {
      const res = await p.request({ method: 'GET', url, key: null });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body).toBe(INDEX);
      expect(res.headers.etag).toMatch(/^"[\w-]+"$/);
      expectSecurityHeaders(res.headers);
    }
    // A key header that does not verify changes nothing: the page is public.
    const withBadKey = await p.request({ method: 'GET', url: '/portal', key: 'PROD_API_garbage' });
    expect(withBadKey.statusCode).toBe(200);
  });

  it('answers 304 to a matching If-None-Match, 200 to a stale one', async () => {
    const first = await p.request({ method: 'GET', url: '/portal', key: null });
    const etag = String(first.headers.etag);
    const again = await p.request({
      method: 'GET',
      url: '/portal',
      key: null,
      headers: { 'if-none-match': etag },
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const stale = await p.request({
      method: 'GET',
      url: '/portal',
      key: null,
      headers: { 'if-none-match': '"other"' },
    });
    expect(stale.statusCode).toBe(200);
  });

  it('serves hashed assets immutable for a year with their content type', async () => {
    const js = await p.request({ method: 'GET', url: '/portal/assets/app.ABC123.js', key: null });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.body).toBe(JS);
    expectSecurityHeaders(js.headers);
    const css = await p.request({ method: 'GET', url: '/portal/assets/app.DEF456.css', key: null });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.body).toBe(CSS);
    const head = await p.request({ method: 'HEAD', url: '/portal/assets/app.ABC123.js', key: null });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
  });

  it("a missing asset is the platform's 404, with the same headers", async () => {
    const res = await p.request({ method: 'GET', url: '/portal/assets/app.NOPE.js', key: null });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: true, code: 'NOT_FOUND' });
    expect(res.json().message).toContain('app.NOPE.js');
    expectSecurityHeaders(res.headers);
    const other = await p.request({ method: 'GET', url: '/portal/elsewhere', key: null });
    expect(other.statusCode).toBe(404);
    expect(other.json()).toMatchObject({ error: true });
  });

  it('never serves a file outside the assets folder, a dotfile, a subfolder or an unknown type', async () => {
    // Sent byte for byte over a socket: an HTTP client would resolve the dot segments before sending.
    const { port } = p.app.server.address() as AddressInfo;
    const attempts = [
      '/portal/assets/../index.html',
      '/portal/assets/../secret.js',
      '/portal/assets/../../secret.js',
      '/portal/assets/..%2fsecret.js',
      '/portal/assets/..%2f..%2fsecret.js',
      '/portal/assets/%2e%2e%2fsecret.js',
      '/portal/assets/%2e%2e/%2e%2e/secret.js',
      '/portal/assets/..%5csecret.js',
      '/portal/assets/..%5c..%5csecret.js',
      '/portal/assets/%2e%2e',
      '/portal/assets/..',
      '/portal/assets/.',
      '/portal/assets/.hidden.js',
      '/portal/assets/sub/deep.js',
      '/portal/assets/sub%2fdeep.js',
      '/portal/assets/sub/../../secret.js',
      '/portal/assets/notes.txt',
      `/portal/assets/${encodeURIComponent(path.join(dir, 'secret.js'))}`,
      `/portal/assets/${path.join(dir, 'secret.js')}`,
      '/portal/assets/app.ABC123.js%00.css',
      '/portal/assets/%00',
      '/portal/assets/',
    ];
    for (const url of attempts) {
      const res = await rawGet(port, url);
      expect([400, 404], url).toContain(res.status);
      expect(res.body, url).not.toContain(SECRET);
      expect(JSON.parse(res.body), url).toMatchObject({ error: true });
    }
    // The same server serves a real asset over the same path: the refusals above are not a broken socket.
    expect((await rawGet(port, '/portal/assets/app.ABC123.js')).status).toBe(200);
  });

  it('by default serves dist/portal of this repository (what scripts/build-portal.mjs writes)', () => {
    expect(DEFAULT_PORTAL_DIR).toBe(path.resolve('dist', 'portal'));
  });
});

describe('portal-web: before the portal is built', () => {
  it('answers 503 in words instead of a bare 404', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'portal-web-empty-'));
    const p = await createTestPlatform({
      dialect: 'sqlite',
      modules: [...allModules.filter((m) => m !== portalWebModule), createPortalWebModule({ dir: empty })],
    });
    try {
      const res = await p.request({ method: 'GET', url: '/portal', key: null });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ error: true, code: 'SERVICE_UNAVAILABLE' });
      expect(res.json().message).toMatch(/not built/);
      expect(res.headers['content-security-policy']).toBe(CSP);
    } finally {
      await p.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('scripts/build-portal.mjs', () => {
  it("type-checks the portal's sources (esbuild only strips types; the root tsconfig does not cover web/)", async () => {
    const result = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(
        process.execPath,
        [path.resolve('node_modules/typescript/bin/tsc'), '-p', 'web/portal/tsconfig.json'],
        (e, stdout, stderr) => resolve({ code: e ? Number(e.code ?? -1) : 0, out: stdout + stderr }),
      );
    });
    expect(result.out).toBe('');
    expect(result.code).toBe(0);
  }, 60_000);

  it('writes index.html referencing content-hashed assets, with nothing inline and nothing from another origin', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'portal-build-'));
    try {
      const out = path.join(root, 'portal');
      const assets = await buildPortal({ outDir: out });
      expect(assets.js).toMatch(/^\/portal\/assets\/app\.[A-Z0-9]+\.js$/);
      expect(assets.css).toMatch(/^\/portal\/assets\/app\.[A-Z0-9]+\.css$/);
      const html = readFileSync(path.join(out, 'index.html'), 'utf8');
      expect(html).toContain(`<script type="module" src="${assets.js}"></script>`);
      expect(html).toContain(`<link rel="stylesheet" href="${assets.css}" />`);
      // The CSP allows no inline script or style: every <script> has a src, no style attribute or element.
      expect(html.match(/<script\b[^>]*>/g)?.every((tag) => tag.includes(' src='))).toBe(true);
      expect(html).not.toMatch(/<style|style=/);
      // No CDN: nothing the page loads names another origin.
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
      const files = readdirSync(path.join(out, 'assets'));
      for (const asset of [assets.js, assets.css]) expect(files).toContain(path.basename(asset));
      const js = readFileSync(path.join(out, 'assets', path.basename(assets.js)), 'utf8');
      expect(js).not.toMatch(/import\s*\(?\s*["']https?:/);
      expect(js).not.toContain('eval(');
      // A second build replaces the folder whole: no stale files of the first stay behind.
      writeFileSync(path.join(out, 'assets', 'app.STALE.js'), '');
      await buildPortal({ outDir: out });
      expect(existsSync(path.join(out, 'assets', 'app.STALE.js'))).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('scripts/ensure-build.mjs and the portal', () => {
  /** A project of its own: the scripts, a copy of web/portal, this repository's node_modules, and a current tsc build. */
  function project(): string {
    const root = mkdtempSync(path.join(tmpdir(), 'portal-ensure-'));
    mkdirSync(path.join(root, 'scripts'));
    for (const f of ['ensure-build.mjs', 'build-portal.mjs', 'tsc-path.mjs'])
      cpSync(path.resolve('scripts', f), path.join(root, 'scripts', f));
    cpSync(path.resolve('web', 'portal'), path.join(root, 'web', 'portal'), { recursive: true });
    symlinkSync(path.resolve('node_modules'), path.join(root, 'node_modules'), 'dir');
    mkdirSync(path.join(root, 'src'));
    writeFileSync(path.join(root, 'src', 'a.ts'), '');
    for (const f of ['package.json', 'tsconfig.json', 'tsconfig.build.json'])
      writeFileSync(path.join(root, f), '{}');
    // The server's build is current (its stamp newer than src/): only the portal is in question.
    mkdirSync(path.join(root, 'dist'));
    writeFileSync(path.join(root, 'dist', 'main.js'), '');
    const past = new Date(Date.now() - 60_000);
    for (const f of ['src/a.ts', 'src', 'package.json', 'tsconfig.json', 'tsconfig.build.json'])
      utimesSync(path.join(root, f), past, past);
    writeFileSync(path.join(root, 'dist', '.build-stamp'), '');
    return root;
  }

  const ensure = (root: string, ...args: string[]) =>
    new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [path.join(root, 'scripts', 'ensure-build.mjs'), ...args],
        { cwd: root },
        (e, _o, stderr) => resolve({ code: e ? (typeof e.code === 'number' ? e.code : -1) : 0, stderr }),
      );
    });

  it('bundles the portal when it has no build or web/portal changed, and not otherwise', async () => {
    const root = project();
    try {
      expect((await ensure(root, '--check')).code).toBe(1);
      const first = await ensure(root);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toMatch(/no portal build yet: bundling the portal/);
      expect(first.stderr).not.toMatch(/compiling/);
      expect(existsSync(path.join(root, 'dist', 'portal', 'index.html'))).toBe(true);
      expect(await ensure(root)).toEqual({ code: 0, stderr: '' });
      expect((await ensure(root, '--check')).code).toBe(0);

      const past = new Date(Date.now() - 5_000);
      utimesSync(path.join(root, 'dist', 'portal', '.build-stamp'), past, past);
      writeFileSync(path.join(root, 'web', 'portal', 'src', 'format.ts'), 'export const changed = 1;\n', {
        flag: 'a',
      });
      expect((await ensure(root, '--check')).code).toBe(1);
      const again = await ensure(root);
      expect(again.stderr).toMatch(/web\/portal changed since the last build: bundling/);
      expect(again.code).toBe(0);

      // A portal that does not compile fails a start (exit 1) but not an install.
      utimesSync(path.join(root, 'dist', 'portal', '.build-stamp'), past, past);
      writeFileSync(path.join(root, 'web', 'portal', 'src', 'main.tsx'), 'import "./missing.js";\n');
      const broken = await ensure(root);
      expect(broken.code).toBe(1);
      expect(broken.stderr).toMatch(/the portal build failed/);
      expect((await ensure(root, '--install')).code).toBe(0);
      // The last good build is still served.
      expect(existsSync(path.join(root, 'dist', 'portal', 'index.html'))).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});
