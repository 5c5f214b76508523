import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPdf } from '../../src/modules/documents/loaders/pdf-fixture.js';
import { otherAccountKey } from '../helpers/accounts.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { type DocView, load, loaded, processed, query } from './support.js';

const FOX = `# Foxes

The red fox lives across the Northern Hemisphere. Foxes hunt small rodents at dusk.

## Diet

A fox eats voles, rabbits, berries and insects. In winter the fox listens for mice under the snow.`;

const TEA = `# Tea

Green tea is steamed or pan-fired soon after picking. Black tea is fully oxidised before drying.

Oolong sits between green and black tea. Brewing green tea with boiling water makes it bitter.`;

describe.each(await testDialects())('documents and knowledge base on %s', (dialect) => {
  let p: TestPlatform;
  let site: Server;
  let siteUrl: string;

  beforeAll(async () => {
    site = createServer((req, res) => {
      if (req.url === '/article.html') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          '<html><head><title>Otters</title></head><body><nav>menu</nav><article><h1>Sea otters</h1>' +
            '<p>Sea otters hold hands while they sleep so they do not drift apart. They use rocks as tools to open shellfish.</p>' +
            '<p>An otter has the densest fur of any animal, about a million hairs per square inch.</p></article></body></html>',
        );
      } else if (req.url === '/notes.md') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('# Field notes\n\nThe heron waited by the reeds for an hour.');
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
    p = await createTestPlatform({ dialect, env: { OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
  });
  afterAll(async () => {
    await p?.close();
    await new Promise((r) => site.close(r));
  });

  it('loads text and markdown; the same content in the same topic is the existing document (200)', async () => {
    const first = await load(p, { source: 'markdown', content: FOX, topic: 'animals' });
    expect(first.statusCode).toBe(201);
    const doc = first.json() as DocView;
    expect(doc).toMatchObject({
      source: 'markdown',
      title: 'Foxes',
      mimeType: 'text/markdown',
      topic: 'animals',
      status: 'loaded',
      pages: [{ pageNumber: 1, text: FOX }],
      charCount: FOX.length,
      contentHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const again = await load(p, { source: 'markdown', content: FOX, topic: 'animals' });
    expect(again.statusCode).toBe(200);
    expect((again.json() as DocView).documentId).toBe(doc.documentId);
    const elsewhere = await load(p, { source: 'markdown', content: FOX, topic: 'other' });
    expect(elsewhere.statusCode).toBe(201);
    const text = await loaded(p, { source: 'text', content: 'Plain words only.', title: 'Given title' });
    expect(text).toMatchObject({ title: 'Given title', topic: 'default', mimeType: 'text/plain' });
  });

  it('loads HTML (main content, headings kept) and URLs through the outbound guard', async () => {
    const page = await loaded(p, { source: 'url', url: `${siteUrl}/article.html`, topic: 'web' });
    expect(page.title).toBe('Otters');
    const body = page.pages?.[0]?.text ?? '';
    expect(body).toMatch(/# Sea otters/);
    expect(body).toContain('hold hands while they sleep');
    expect(body).not.toContain('menu');
    const notes = await loaded(p, { source: 'url', url: `${siteUrl}/notes.md`, topic: 'web' });
    expect(notes.pages?.[0]?.text).toContain('heron');
    const html = await loaded(p, {
      source: 'html',
      content: '<h2>Inline</h2><p>Some inline HTML text here.</p>',
      topic: 'web',
    });
    expect(html.pages?.[0]?.text).toContain('Some inline HTML text here.');
  });

  it('loads a PDF (base64) as text per page with page numbers, and chunks keep the pages', async () => {
    const pdf = buildPdf(
      ['Chapter one tells of the harbour.', 'Chapter two tells of the lighthouse.'],
      'Coast',
    );
    const res = await load(p, { source: 'pdf', content: pdf.toString('base64'), topic: 'pdf' });
    expect(res.statusCode, res.body).toBe(201);
    const doc = res.json() as DocView;
    expect(doc).toMatchObject({ mimeType: 'application/pdf', title: 'Coast', pageCount: 2 });
    expect(doc.pages?.map((pg) => pg.pageNumber)).toEqual([1, 2]);
    expect(doc.pages?.[1]?.text).toContain('lighthouse');
    await processed(p, doc.documentId, { chunkSize: 100, chunkOverlap: 0 });
    const chunks = (
      (await p.request({ method: 'GET', url: `/api/documents/${doc.documentId}/chunks` })).json() as {
        data: Array<{ pageNumber: number; text: string }>;
      }
    ).data;
    expect(chunks.find((c) => c.text.includes('lighthouse'))?.pageNumber).toBe(2);
  });

  it('refuses bad input with clear errors, and stores nothing', async () => {
    const before = (
      (await p.request({ method: 'GET', url: '/api/documents?limit=200' })).json() as { data: unknown[] }
    ).data.length;
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ source: 'fax', content: 'x' }, 400, 'VALIDATION_ERROR'],
      [{ source: 'text' }, 400, 'VALIDATION_ERROR'],
      [{ source: 'url' }, 400, 'VALIDATION_ERROR'],
      [{ source: 'pdf', content: Buffer.from('not a pdf at all').toString('base64') }, 422, 'UNPROCESSABLE'],
      [{ source: 'text', content: '   \n  ' }, 400, 'VALIDATION_ERROR'],
      [{ source: 'html', content: '<script>alert(1)</script>' }, 422, 'UNPROCESSABLE'],
      [{ source: 'url', url: `${siteUrl}/missing` }, 502, 'UPSTREAM_ERROR'],
      [{ source: 'text', content: 'x', topic: 'bad topic!' }, 400, 'VALIDATION_ERROR'],
    ];
    for (const [body, status, code] of cases) {
      const res = await load(p, body);
      expect(res.statusCode, `${JSON.stringify(body)} → ${res.body}`).toBe(status);
      expect(res.json()).toMatchObject({ error: true, code });
    }
    const after = (
      (await p.request({ method: 'GET', url: '/api/documents?limit=200' })).json() as { data: unknown[] }
    ).data.length;
    expect(after).toBe(before);
  });

  it('refuses private addresses unless the operator allows them', async () => {
    const strict = await createTestPlatform({ dialect: 'sqlite' });
    try {
      const res = await load(strict, { source: 'url', url: `${siteUrl}/article.html` });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 'FORBIDDEN', message: expect.stringMatching(/not allowed/) });
      const metadata = await load(strict, { source: 'url', url: 'http://169.254.169.254/latest/meta-data/' });
      expect(metadata.statusCode).toBe(403);
    } finally {
      await strict.close();
    }
  });

  it('lists, reads (with or without pages), and keeps accounts apart', async () => {
    const doc = await loaded(p, {
      source: 'text',
      content: 'A document to list and read.',
      topic: 'listing',
    });
    const list = await p.request({ method: 'GET', url: '/api/documents?topic=listing' });
    expect((list.json() as { data: DocView[] }).data.map((d) => d.id)).toEqual([doc.id]);
    expect((await p.request({ method: 'GET', url: '/api/documents?status=nope' })).statusCode).toBe(400);
    const slim = (
      await p.request({ method: 'GET', url: `/api/documents/${doc.id}?fields=title,status` })
    ).json();
    expect(slim).toEqual({ id: doc.id, title: expect.any(String), status: 'loaded' });
    const stranger = await otherAccountKey(p);
    expect(
      (await p.request({ method: 'GET', url: `/api/documents/${doc.id}`, key: stranger })).statusCode,
    ).toBe(404);
    expect(
      (await p.request({ method: 'DELETE', url: `/api/documents/${doc.id}`, key: stranger })).statusCode,
    ).toBe(404);
    expect(
      (
        (await p.request({ method: 'GET', url: '/api/documents', key: stranger })).json() as {
          data: unknown[];
        }
      ).data,
    ).toEqual([]);
  });

  it('processes on the queue: chunks with pages and offsets, embeddings, indexed; again replaces the chunks', async () => {
    const doc = await loaded(p, { source: 'markdown', content: `${FOX}\n\n${TEA}`, topic: 'processing' });
    const done = await processed(p, doc.id, { chunkSize: 120, chunkOverlap: 20 });
    expect(done).toMatchObject({ status: 'indexed', error: null, embeddingModel: 'builtin/hashed-ngrams' });
    expect(done.chunkCount).toBeGreaterThan(3);
    const chunks = (
      (await p.request({ method: 'GET', url: `/api/documents/${doc.id}/chunks` })).json() as {
        data: Array<{
          chunkId: string;
          index: number;
          startOffset: number;
          endOffset: number;
          text: string;
          pageNumber: number;
        }>;
      }
    ).data;
    // A page at a time: the pages together are the whole list, in order; a cursor no page made is a 400.
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await p.request({
        method: 'GET',
        url: `/api/documents/${doc.id}/chunks?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      });
      const body = res.json() as { data: Array<{ chunkId: string }>; nextCursor: string | null };
      expect(body.data.length).toBeLessThanOrEqual(2);
      paged.push(...body.data.map((c) => c.chunkId));
      cursor = body.nextCursor;
    } while (cursor);
    expect(paged).toEqual(chunks.map((c) => c.chunkId));
    for (const query of ['cursor=bm90LWEtY3Vyc29y', 'limit=1001', 'limit=0', 'sort=text']) {
      const refused = await p.request({ method: 'GET', url: `/api/documents/${doc.id}/chunks?${query}` });
      expect(refused.statusCode, query).toBe(400);
      expect(refused.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR' });
    }
    const page = `${FOX}\n\n${TEA}`;
    for (const [i, c] of chunks.entries()) {
      expect(c.index).toBe(i);
      expect(c.pageNumber).toBe(1);
      expect(page.slice(c.startOffset, c.endOffset)).toBe(c.text);
      expect(c.text.length).toBeLessThanOrEqual(120);
    }
    const again = await processed(p, doc.id, { chunkSize: 400, chunkOverlap: 0 });
    expect(again.chunkCount, JSON.stringify([done, again])).toBeLessThan(done.chunkCount);
    const after = (
      (await p.request({ method: 'GET', url: `/api/documents/${doc.id}/chunks` })).json() as {
        data: Array<{ chunkId: string }>;
      }
    ).data;
    expect(after.map((c) => c.chunkId).some((id) => chunks.some((c) => c.chunkId === id))).toBe(false);
    const bad = await p.request({
      method: 'POST',
      url: `/api/documents/${doc.id}/process`,
      payload: { chunkSize: 100, chunkOverlap: 100 },
    });
    expect(bad.statusCode).toBe(400);
    const missing = await p.request({ method: 'POST', url: '/api/documents/doc_nope/process', payload: {} });
    expect(missing.statusCode).toBe(404);
  });

  it('embeds a document of many chunks in several batches', async () => {
    const long = Array.from(
      { length: 600 },
      (_, i) => `Sentence number ${i} talks about topic ${i % 7}.`,
    ).join('\n\n');
    const doc = await loaded(p, { source: 'text', content: long, topic: 'batches' });
    const done = await processed(p, doc.id, { chunkSize: 60, chunkOverlap: 0 });
    expect(done).toMatchObject({ status: 'indexed', error: null });
    // More than two embedding rounds (256 chunks) and insert statements (400 rows).
    expect(done.chunkCount).toBeGreaterThan(512);
    const chunks = (await p.request({ method: 'GET', url: `/api/documents/${doc.id}/chunks` })).json() as {
      data: Array<{ index: number; embeddingModel: string | null }>;
    };
    expect(chunks.data.map((c) => c.index)).toEqual(Array.from({ length: done.chunkCount }, (_, i) => i));
    expect(chunks.data.every((c) => c.embeddingModel === 'builtin/hashed-ngrams')).toBe(true);
  });

  it('a job cut off by a crash (its parameters still on the row) runs again at the next start', async () => {
    const doc = await loaded(p, {
      source: 'text',
      content: 'The night train to Vienna leaves at ten.',
      topic: 'recovery',
    });
    const job = {
      documentId: doc.id,
      accountId: p.accountId,
      operations: ['chunk', 'embed', 'index'],
      chunkSize: 200,
      chunkOverlap: 0,
      embeddingModel: 'builtin/hashed-ngrams',
    };
    // What a process that died mid-job leaves behind: the job's parameters, no queue entry.
    await p.ctx.db
      .updateTable('documents')
      .set({ processing: JSON.stringify(job) })
      .where('id', '=', doc.id)
      .execute();
    expect(await p.ctx.apis.documents?.documents.recover()).toBeGreaterThanOrEqual(1);
    const view = await until(
      async () => {
        const shown = (
          await p.request({ method: 'GET', url: `/api/documents/${doc.id}?fields=status,processing` })
        ).json() as DocView;
        return shown.status === 'indexed' && !shown.processing ? shown : undefined;
      },
      'the recovered document indexed',
      20_000,
    );
    expect(view).toMatchObject({ status: 'indexed', processing: false });
  });

  it('an unknown embedding model fails the processing with the reason', async () => {
    const doc = await loaded(p, {
      source: 'text',
      content: 'A short text about failing models.',
      topic: 'failing',
    });
    const failed = await processed(p, doc.id, { embeddingModel: 'no-such-model' });
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/no-such-model/);
  });

  it('answers queries by keyword, vector and hybrid, within topics', async () => {
    for (const [content, topic] of [
      [FOX, 'kb'],
      [TEA, 'kb'],
      ['# Bikes\n\nA bicycle chain needs oil every few hundred kilometres.', 'kb-other'],
    ] as const) {
      const doc = await loaded(p, { source: 'markdown', content, topic });
      await processed(p, doc.id, { chunkSize: 200, chunkOverlap: 0 });
    }
    for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
      const res = await query(p, { query: 'what does a fox eat in winter', mode, topics: ['kb'] });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as {
        results: Array<{
          text: string;
          topic: string;
          keywordRank: number | null;
          vectorRank: number | null;
          title: string;
        }>;
        tookMs: number;
      };
      expect(body.results[0]?.text, mode).toMatch(/fox/i);
      expect(body.results.every((r) => r.topic === 'kb')).toBe(true);
      expect(body.tookMs).toBeGreaterThanOrEqual(0);
      if (mode === 'hybrid')
        expect(body.results[0]?.keywordRank ?? body.results[0]?.vectorRank).not.toBeNull();
    }
    const tea = (
      await query(p, { query: 'bitter green tea brewing', topK: 1, topics: ['kb', 'kb-other'] })
    ).json() as { results: Array<{ title: string }> };
    expect(tea.results).toHaveLength(1);
    expect(tea.results[0]?.title).toBe('Tea');
    const none = (await query(p, { query: 'zebra quantum', mode: 'keyword', topics: ['kb'] })).json() as {
      results: unknown[];
    };
    expect(none.results).toEqual([]);
    const mismatch = await query(p, { query: 'fox', topics: ['kb'], embeddingModel: 'builtin/use-lite' });
    expect(mismatch.statusCode).toBe(409);
    expect(mismatch.json()).toMatchObject({
      code: 'CONFLICT',
      details: { topicModel: 'builtin/hashed-ngrams', queryModel: 'builtin/use-lite' },
    });
    const topics = (await p.request({ method: 'GET', url: '/api/knowledge/topics' })).json() as Array<{
      topic: string;
      documentCount: number;
      chunkCount: number;
    }>;
    expect(topics.find((t) => t.topic === 'kb')).toMatchObject({ documentCount: 2 });
  });

  it('deleting a document removes its chunks from search at once', async () => {
    const doc = await loaded(p, {
      source: 'text',
      content: 'The lighthouse keeper polished the great lens every morning.',
      topic: 'gone',
    });
    await processed(p, doc.id);
    const found = (await query(p, { query: 'lighthouse lens', topics: ['gone'] })).json() as {
      results: unknown[];
    };
    expect(found.results.length).toBeGreaterThan(0);
    expect((await p.request({ method: 'DELETE', url: `/api/documents/${doc.id}` })).statusCode).toBe(204);
    const after = (await query(p, { query: 'lighthouse lens', topics: ['gone'] })).json() as {
      results: unknown[];
    };
    expect(after.results).toEqual([]);
    expect((await p.request({ method: 'GET', url: `/api/documents/${doc.id}/chunks` })).statusCode).toBe(404);
  });

  it('knowledge routes take a docproc or an agent key; other services and customer tokens are refused', async () => {
    const agent = await p.createKey({
      name: 'agent',
      type: 'development',
      role: 'Reader',
      services: ['agent'],
    });
    expect((await query(p, { query: 'fox' }, agent.key)).statusCode).toBe(200);
    const workflow = await p.createKey({
      name: 'wf',
      type: 'development',
      role: 'Admin',
      services: ['workflow'],
    });
    expect((await query(p, { query: 'fox' }, workflow.key)).statusCode).toBe(403);
    expect((await load(p, { source: 'text', content: 'x' }, agent.key)).statusCode).toBe(403);
  });

  it('the built-in extractive model answers from the account’s knowledge base', async () => {
    const res = await p.request({
      method: 'POST',
      url: '/api/chat',
      payload: {
        model: 'builtin/extractive',
        stream: false,
        messages: [{ role: 'user', content: 'What does a fox eat in winter?' }],
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const content = (res.json() as { message: { content: string } }).message.content;
    expect(content).toMatch(/mice under the snow|voles/);
    expect(content).toMatch(/Sources: Foxes/);
  });
});
