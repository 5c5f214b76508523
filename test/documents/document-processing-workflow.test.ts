import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listeningPlatform } from '../helpers/listening.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createCredential, settled } from '../workflows/support.js';
import { type DocView, loaded, query } from './support.js';

/**
 * The shipped document-processing workflow on the default configuration: DOCPROC_URL unset, so its
 * steps call this platform's own `POST /api/documents/{id}/process?wait=true`.
 */
describe.each(await testDialects())('document-processing workflow end to end on %s', (dialect) => {
  let p: TestPlatform;

  beforeAll(async () => {
    p = await listeningPlatform(dialect);
    const key = await p.createKey({
      name: 'workflow → docproc',
      type: 'production',
      role: 'Writer',
      services: ['docproc'],
    });
    await createCredential(p, 'docproc-api-key', 'httpBearerAuth', { token: key.key });
    await activate(p, 'wf_document_processing');
  });
  afterAll(() => p?.close());

  const start = async (body: Record<string, unknown>) => {
    const res = await p.app.inject({
      method: 'POST',
      url: '/webhook/document-processing',
      payload: body,
      headers: { 'x-api-key': p.adminKey },
    });
    expect(res.statusCode, res.body).toBe(202);
    return settled(p, (res.json() as { executionId: string }).executionId, 20_000);
  };

  it('chunks, embeds and indexes a loaded document; the execution shows each step; it is searchable', async () => {
    const doc = await loaded(p, {
      source: 'markdown',
      content:
        '# Kiln\n\nThe kiln fires stoneware at 1240 degrees.\n\nGlazes melt into glass in the last hour of firing.',
      topic: 'pottery',
    });
    const exe = await start({
      documentId: doc.documentId,
      operations: ['chunk', 'embed', 'index'],
      chunkSize: 60,
      embeddingModel: 'builtin/hashed-ngrams',
    });
    expect(exe.status, JSON.stringify(exe)).toBe('success');
    const steps = (exe.data as { resultData: { runData: Record<string, unknown> } }).resultData.runData;
    expect(Object.keys(steps)).toEqual(expect.arrayContaining(['Chunk', 'Embed', 'Index', 'Result']));
    const after = (
      await p.request({ method: 'GET', url: `/api/documents/${doc.documentId}?fields=status,chunkCount` })
    ).json() as DocView;
    expect(after).toMatchObject({ status: 'indexed' });
    expect(after.chunkCount).toBeGreaterThan(1);
    const found = (await query(p, { query: 'glaze melts into glass', topics: ['pottery'] })).json() as {
      results: Array<{ documentId: string }>;
    };
    expect(found.results[0]?.documentId).toBe(doc.documentId);
  });

  it('a step that fails (an unknown embedding model) fails the execution at that node', async () => {
    const doc = await loaded(p, {
      source: 'text',
      content: 'Clay shrinks as it dries and again as it fires.',
      topic: 'pottery',
    });
    const exe = await start({
      documentId: doc.documentId,
      operations: ['chunk', 'embed'],
      chunkSize: 200,
      embeddingModel: 'no-such-model',
    });
    expect(exe.status).toBe('error');
    expect(JSON.stringify(exe.data)).toMatch(/"node":"Embed"/);
    const after = (
      await p.request({ method: 'GET', url: `/api/documents/${doc.documentId}?fields=status,error` })
    ).json() as DocView;
    expect(after).toMatchObject({ status: 'failed', error: expect.stringMatching(/no-such-model/) });
  });
});
