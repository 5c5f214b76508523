import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/modules/auth/key-format.js';
import { buildPdf } from '../../src/modules/documents/loaders/pdf-fixture.js';
import { stopChild } from '../helpers/child-process.js';
import { freePort } from '../helpers/listening.js';
import { until } from '../helpers/until.js';

// `npm start` runs the build's bundle (dist/bundle/, scripts/ensure-build.mjs), not the files the other
// suites import: here the built server is started as users start it and each part that finds a file
// beside its own code (worker threads, guest scripts, the portal's assets, package.json) is used once,
// so a path the bundle got wrong fails here rather than on a user's first PDF.
const run = promisify(execFile);
const ROOT = path.resolve('.');
const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-bundle-'));
const key = generateKey('production');
let server: ChildProcess | undefined;
let out = '';
let base = '';

const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
// biome-ignore lint/suspicious/noExplicitAny: tests index into API answers freely
type Json = any;
async function call(method: string, url: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text };
}

beforeAll(async () => {
  await run(process.execPath, ['scripts/ensure-build.mjs'], { cwd: ROOT, timeout: 240_000 });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, ['dist/main.js', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      REDIS_URL: '',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      PLATFORM_BOOTSTRAP_KEY: key,
      WORKFLOWS_DIR: path.join(dataDir, 'none'),
    },
  });
  server.stdout?.on('data', (chunk) => {
    out += chunk;
  });
  server.stderr?.on('data', (chunk) => {
    out += chunk;
  });
  await until(
    async () => {
      if (server?.exitCode !== null) throw new Error(`the server exited:\n${out}`);
      return fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      );
    },
    'the built server answers /health',
    120_000,
  );
}, 300_000);

afterAll(async () => {
  await stopChild(server);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the built server, as `npm start` runs it (the bundle)', () => {
  it('is the bundle that runs, and it knows its own version', async () => {
    expect(existsSync(path.join(ROOT, 'dist/bundle/server.js'))).toBe(true);
    const version = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
    const health = await call('GET', '/health');
    expect(health.json.version).toBe(version);
  });

  it('serves the portal page and its script from files beside its code', async () => {
    const page = await fetch(`${base}/portal/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const script = /src="([^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeTruthy();
    const js = await fetch(new URL(script as string, `${base}/portal/`));
    expect(js.status).toBe(200);
    expect((await js.text()).length).toBeGreaterThan(1000);
  });

  it('runs a Code node (sandbox worker) and an expression (expression sandbox) in a workflow', async () => {
    const created = await call('POST', '/api/v1/workflows', {
      name: 'bundle check',
      nodes: [
        {
          name: 'Start',
          type: 'n8n-nodes-base.manualTrigger',
          typeVersion: 1,
          position: [0, 0],
          parameters: {},
        },
        {
          name: 'Code',
          type: 'n8n-nodes-base.code',
          typeVersion: 2,
          position: [200, 0],
          parameters: { jsCode: 'return [{ json: { n: 6 * 7 } }];' },
        },
        {
          name: 'Set',
          type: 'n8n-nodes-base.set',
          typeVersion: 3.4,
          position: [400, 0],
          parameters: {
            assignments: {
              assignments: [
                { id: 'a', name: 'label', value: "={{ String($json.n).padStart(4, '0') }}", type: 'string' },
              ],
            },
            options: {},
          },
        },
      ],
      connections: {
        Start: { main: [[{ node: 'Code', type: 'main', index: 0 }]] },
        Code: { main: [[{ node: 'Set', type: 'main', index: 0 }]] },
      },
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const ran = await call('POST', `/api/v1/workflows/${created.json.id}/run`, {});
    expect(ran.status, JSON.stringify(ran.json)).toBe(200);
    expect(ran.json.status).toBe('success');
    const setRuns = ran.json.data.resultData.runData.Set;
    expect(setRuns[0].data.main[0][0].json).toEqual({ label: '0042' });
  }, 60_000);

  it('loads HTML and PDF documents (their worker threads), searches them and answers from them', async () => {
    const docs = [
      { source: 'html', content: '<h2>Lighthouse</h2><p>The granite lighthouse guards the harbour.</p>' },
      {
        source: 'pdf',
        content: buildPdf(['The copper bell rings at the pier at dusk.'], 'Pier').toString('base64'),
      },
    ];
    for (const doc of docs) {
      const loaded = await call('POST', '/api/documents/load', { ...doc, topic: 'bundle' });
      expect(loaded.status, JSON.stringify(loaded.json)).toBeLessThan(300);
      const processed = await call('POST', `/api/documents/${loaded.json.documentId}/process`, {});
      expect(processed.status, JSON.stringify(processed.json)).toBeLessThan(300);
      await until(
        async () => {
          const row = (await call('GET', `/api/documents/${loaded.json.documentId}?fields=status,processing`))
            .json;
          if (row.status === 'failed') throw new Error(`${doc.source} failed: ${JSON.stringify(row)}`);
          return !row.processing && row.status === 'indexed';
        },
        `the ${doc.source} document is indexed`,
        60_000,
      );
    }
    const found = await call('POST', '/api/knowledge/query', {
      query: 'copper bell',
      topK: 3,
      topics: ['bundle'],
    });
    expect(found.status, JSON.stringify(found.json)).toBe(200);
    expect(JSON.stringify(found.json)).toContain('copper bell');
    const chat = await call('POST', '/api/chat', {
      model: 'builtin/extractive',
      stream: false,
      messages: [
        { role: 'user', content: 'The granite lighthouse guards the harbour. What guards the harbour?' },
      ],
    });
    expect(chat.status, JSON.stringify(chat.json)).toBe(200);
    expect(chat.json.message.content).toContain('lighthouse');
    const embedded = await call('POST', '/api/embed', { model: 'builtin/use-lite', input: 'harbour' });
    expect(embedded.status, JSON.stringify(embedded.json)).toBe(200);
    expect(embedded.json.embeddings[0].length).toBeGreaterThan(10);
  }, 120_000);
});
