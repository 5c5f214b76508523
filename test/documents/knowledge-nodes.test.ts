import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listeningPlatform } from '../helpers/listening.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createCredential, createWorkflow, flow } from '../workflows/support.js';

/** The documentLoad and knowledgeQuery nodes, on the default configuration (DOCPROC_URL = this server). */
describe.each(await testDialects())('knowledge workflow nodes on %s', (dialect) => {
  let p: TestPlatform;
  const call = (path: string, body: unknown) =>
    p.app.inject({ method: 'POST', url: `/webhook/${path}`, payload: body as object });

  beforeAll(async () => {
    p = await listeningPlatform(dialect);
    const key = await p.createKey({
      name: 'nodes',
      type: 'production',
      role: 'Writer',
      services: ['docproc'],
    });
    await createCredential(p, 'kb', 'httpBearerAuth', { token: key.key });
    const hook = (path: string) => ({
      name: 'Webhook',
      type: 'webhook',
      parameters: { path, httpMethod: 'POST', responseMode: 'lastNode' },
    });
    await activate(
      p,
      await createWorkflow(
        p,
        flow('ingest', [
          hook('kb-ingest'),
          {
            name: 'Load',
            type: 'documentLoad',
            parameters: {
              source: 'markdown',
              content: '={{ $json.body.text }}',
              topic: 'notes',
              chunkSize: 200,
              credential: 'kb',
            },
          },
        ]),
      ),
    );
    await activate(
      p,
      await createWorkflow(
        p,
        flow('ask', [
          hook('kb-ask'),
          {
            name: 'Search',
            type: 'knowledgeQuery',
            parameters: { query: '={{ $json.body.question }}', topics: ['notes'], topK: 2, credential: 'kb' },
          },
        ]),
      ),
    );
  });
  afterAll(() => p?.close());

  it('documentLoad loads and processes a document; knowledgeQuery finds it, one item per result', async () => {
    const ingest = await call('kb-ingest', {
      text: '# Beekeeping\n\nBees make honey from nectar. A hive can hold sixty thousand bees in summer.',
    });
    expect(ingest.statusCode, ingest.body).toBe(200);
    expect(ingest.json()).toMatchObject({ status: 'indexed', topic: 'notes', title: 'Beekeeping' });
    expect(ingest.json()).not.toHaveProperty('pages');
    const ask = await call('kb-ask', { question: 'how many bees live in a hive' });
    expect(ask.statusCode, ask.body).toBe(200);
    const answer = ask.json() as { text: string; topic: string; title: string } | Array<{ text: string }>;
    const first = Array.isArray(answer) ? answer[0] : answer;
    expect(first?.text).toMatch(/sixty thousand bees/);
  });

  it('a refusal of the document service fails the node with its message', async () => {
    const res = await call('kb-ingest', { text: '   ' });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.body).toMatch(/The document service refused/);
  });
});
