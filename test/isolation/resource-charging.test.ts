import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects, uniqueName } from '../helpers/services.js';

/**
 * Issue 27, item 5: every consumer of the models counts against the calling key. Document
 * processing, knowledge queries, embeddings, flow upserts and retrieval, and agent turns are charged
 * to the key that started them, within its model allow-list and its daily token budget; once the
 * budget is spent the next call is refused with 429 RATE_LIMIT_EXCEEDED (the gateway's documented
 * error). SQLite and PostgreSQL + Redis (the counters live in Redis there).
 */
const EMBEDDING = 'builtin/hashed-ngrams';
const CHAT = 'builtin/extractive';

/** Prose of about `words` words, different per seed (the same content in a topic is one document). */
function prose(seed: string, words: number): string {
  const vocabulary = ['harbour', 'lantern', 'copper', 'meadow', 'signal', 'violet', 'tundra', 'amber'];
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    out.push(`${vocabulary[(i * 7 + seed.length) % vocabulary.length]}${i % 13}`);
    if (i % 12 === 11) out.push(`${seed}.`);
  }
  return out.join(' ');
}

describe.each(await testDialects())('charging the calling key on %s', (dialect) => {
  let p: TestPlatform;

  beforeAll(async () => {
    p = await createTestPlatform({
      dialect,
      env: { QUEUE_PREFIX: uniqueName('q') },
      redis: dialect === 'postgres',
    });
  });
  afterAll(async () => {
    await p?.close();
  });

  const key = (body: Record<string, unknown>) =>
    p.createKey({ name: 'k', type: 'development', role: 'Writer', ...body });
  /** Tokens the key has spent today, as the gateway's budget counts them. */
  const spent = async (keyId: string) => {
    const decision = await p.ctx.limiter.readTokenBudget(keyId, 1_000_000_000);
    return decision.limit - decision.remaining;
  };
  const call = (method: 'POST' | 'GET', url: string, payload: unknown, k: string) =>
    p.request({ method, url, payload: payload as object, key: k });
  const overBudget = (res: LightMyRequestResponse) => {
    expect(res.statusCode, res.body).toBe(429);
    expect(res.headers['retry-after']).toBeDefined();
    expect(res.body).toContain('token budget');
  };
  const loadText = async (topic: string, content: string) => {
    const res = await call('POST', '/api/documents/load', { source: 'text', topic, content }, p.adminKey);
    expect(res.statusCode, res.body).toBe(201);
    return res.json().documentId as string;
  };

  describe('documents', () => {
    it('processing charges the calling key; past a budget of 100 the next call is refused 429', async () => {
      const k = await key({ services: ['docproc'], dailyTokenBudget: 100 });
      const first = await loadText('budget-a', prose('alpha', 1_500));
      const res = await call('POST', `/api/documents/${first}/process?wait=true`, {}, k.key);
      expect(res.statusCode, res.body).toBe(200);
      expect(await spent(k.id)).toBeGreaterThan(100);

      const second = await loadText('budget-a', prose('beta', 300));
      overBudget(await call('POST', `/api/documents/${second}/process?wait=true`, {}, k.key));
      const doc = await call('GET', `/api/documents/${second}`, undefined, p.adminKey);
      expect(doc.json()).toMatchObject({ status: 'loaded', processing: false, chunkCount: 0 });
    });

    it('a long document stops at the budget: one batch of embeddings past it, not the whole document', async () => {
      const k = await key({ services: ['docproc'], dailyTokenBudget: 100 });
      const id = await loadText('budget-b', prose('gamma', 15_000));
      const res = await call(
        'POST',
        `/api/documents/${id}/process?wait=true`,
        { chunkSize: 100, chunkOverlap: 0 },
        k.key,
      );
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().message).toContain('token budget');
      const chunks = (await call('GET', `/api/documents/${id}/chunks`, undefined, p.adminKey)).json()
        .data as Array<{ embeddingModel: string | null }>;
      // Embeddings run in batches of 256 chunks (EMBED_BATCH, src/modules/documents/processor.ts).
      expect(chunks.length).toBeGreaterThan(256);
      // The first batch ran within the budget; nothing after it.
      expect(chunks.filter((c) => c.embeddingModel !== null)).toHaveLength(256);
    });

    it("the key's model allow-list: no embedding with a model it may not use, and nothing queued", async () => {
      const k = await key({ services: ['docproc'], models: [CHAT] });
      const id = await loadText('allow', prose('delta', 200));
      const res = await call('POST', `/api/documents/${id}/process`, { embeddingModel: EMBEDDING }, k.key);
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json()).toMatchObject({ code: 'FORBIDDEN', details: { model: EMBEDDING } });
      const doc = await call('GET', `/api/documents/${id}`, undefined, p.adminKey);
      expect(doc.json()).toMatchObject({ status: 'loaded', processing: false });
      // Chunking alone uses no model.
      const chunked = await call(
        'POST',
        `/api/documents/${id}/process?wait=true`,
        { operations: ['chunk'] },
        k.key,
      );
      expect(chunked.statusCode, chunked.body).toBe(200);
    });

    it("a knowledge query's embedding is the caller's: allow-list and budget", async () => {
      const id = await loadText('query-topic', prose('epsilon', 400));
      const done = await call('POST', `/api/documents/${id}/process?wait=true`, {}, p.adminKey);
      expect(done.statusCode, done.body).toBe(200);
      const limited = await key({ services: ['docproc'], models: [CHAT] });
      const q = { query: 'harbour lantern', topics: ['query-topic'], mode: 'vector' };
      expect((await call('POST', '/api/knowledge/query', q, limited.key)).statusCode).toBe(403);
      const budgeted = await key({ services: ['docproc'], dailyTokenBudget: 100 });
      const long = { ...q, query: prose('zeta', 250) };
      expect((await call('POST', '/api/knowledge/query', long, budgeted.key)).statusCode).toBe(200);
      expect(await spent(budgeted.id)).toBeGreaterThan(100);
      overBudget(await call('POST', '/api/knowledge/query', q, budgeted.key));
    });
  });

  describe('embeddings', () => {
    it('the embeddings API charges the key and refuses past its budget', async () => {
      const k = await key({ services: ['llm'], dailyTokenBudget: 100 });
      const body = { model: EMBEDDING, input: [prose('eta', 300)] };
      expect((await call('POST', '/v1/embeddings', body, k.key)).statusCode).toBe(200);
      expect(await spent(k.id)).toBeGreaterThan(100);
      overBudget(await call('POST', '/v1/embeddings', body, k.key));
    });
  });

  describe('flows', () => {
    let flowId: string;
    beforeAll(async () => {
      const id = await loadText('flow-topic', prose('theta', 200));
      await call('POST', `/api/documents/${id}/process?wait=true`, {}, p.adminKey);
      const made = await call(
        'POST',
        '/api/v1/chatflows',
        { name: 'rag', kind: 'rag', model: CHAT, topics: ['flow-topic'] },
        p.adminKey,
      );
      expect(made.statusCode, made.body).toBe(201);
      flowId = made.json().id;
    });

    it('a vector upsert charges the calling key; past its budget the next is refused', async () => {
      const k = await key({ services: ['flow'], dailyTokenBudget: 100 });
      const upsert = (seed: string) =>
        call(
          'POST',
          `/api/v1/vector/upsert/${flowId}`,
          { documents: [{ pageContent: prose(seed, 800) }] },
          k.key,
        );
      expect((await upsert('iota')).statusCode).toBe(200);
      expect(await spent(k.id)).toBeGreaterThan(100);
      const again = await upsert('kappa');
      expect(again.statusCode, again.body).toBe(429);
    });

    it("a prediction's retrieval is charged with its answer, within the key's models", async () => {
      const k = await key({ services: ['flow'], dailyTokenBudget: 1_000_000 });
      const res = await call(
        'POST',
        `/api/v1/prediction/${flowId}`,
        { question: 'Which harbour lantern?' },
        k.key,
      );
      expect(res.statusCode, res.body).toBe(200);
      expect(await spent(k.id)).toBeGreaterThan(0);
      const chatOnly = await key({ services: ['flow'], models: [CHAT] });
      const refused = await call(
        'POST',
        `/api/v1/prediction/${flowId}`,
        { question: 'Which lantern?' },
        chatOnly.key,
      );
      expect(refused.statusCode, refused.body).toBe(403);
    });
  });

  describe('agents', () => {
    let agentId: string;
    beforeAll(async () => {
      const id = await loadText('agent-topic', prose('lambda', 200));
      await call('POST', `/api/documents/${id}/process?wait=true`, {}, p.adminKey);
      const made = await call(
        'POST',
        '/api/agents',
        { name: 'helper', model: CHAT, knowledgeTopics: ['agent-topic'] },
        p.adminKey,
      );
      expect(made.statusCode, made.body).toBe(201);
      agentId = made.json().id;
    });

    it("a turn charges the sender's key for its retrieval as well as its answer", async () => {
      const k = await key({ services: ['agent'], dailyTokenBudget: 1_000_000 });
      const res = await call('POST', `/api/agents/${agentId}/messages`, { content: prose('mu', 200) }, k.key);
      expect(res.statusCode, res.body).toBe(200);
      const usage = res.json().usage as { promptTokens: number; completionTokens: number };
      // The answer's tokens, and the query's embedding besides.
      expect(await spent(k.id)).toBeGreaterThan(usage.promptTokens + usage.completionTokens);
    });

    it("the sender's allow-list holds for the retrieval too; its budget refuses the next turn", async () => {
      const chatOnly = await key({ services: ['agent'], models: [CHAT] });
      const refused = await call(
        'POST',
        `/api/agents/${agentId}/messages`,
        { content: 'harbour?' },
        chatOnly.key,
      );
      expect(refused.statusCode, refused.body).toBe(403);
      const k = await key({ services: ['agent'], dailyTokenBudget: 100 });
      // Each model call of a turn checks the budget first: the first turn starts within it and
      // spends past it (its passages make a long prompt); the next is refused.
      const first = await call('POST', `/api/agents/${agentId}/messages`, { content: 'harbour?' }, k.key);
      expect(first.statusCode, first.body).toBe(200);
      expect(await spent(k.id)).toBeGreaterThan(100);
      overBudget(await call('POST', `/api/agents/${agentId}/messages`, { content: 'harbour?' }, k.key));
    });
  });
});
