import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import type { EngineDeps } from '../../src/modules/workflows/engine/types.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { aiWorkflow, LC } from './support/ai-workflow.js';
import { runFixture } from './support/n8n-fixtures.js';

/**
 * n8n's Embeddings OpenAI and OpenAI Chat Model on this platform's gateway: the `openAiApi` credential
 * names the platform's `/v1` and a platform key, so a Q&A workflow's embeddings and its answer are
 * calls of that key, listed in `GET /v1/llm/requests` like any other.
 */
describe('retrieval workflow on the platform gateway', () => {
  let bed: LlmTestbed;
  let deps: Partial<EngineDeps>;

  beforeAll(async () => {
    bed = await startLlmTestbed('sqlite');
    deps = {
      http: createOutboundHttp({ allowHosts: [new URL(bed.url).host], timeoutMs: 10_000 }),
      tenant: 'acct_gateway',
      credential: async () => ({ apiKey: bed.p.adminKey, url: `${bed.url}/v1` }),
    };
  });
  afterAll(() => bed?.close());

  const embeddings = {
    name: 'Embeddings',
    type: `${LC}.embeddingsOpenAi`,
    typeVersion: 1.2,
    parameters: { model: 'builtin/hashed-ngrams' },
    credentials: { openAiApi: { id: 'gw', name: 'Platform' } },
  };

  it('embeds through /v1/embeddings and answers through /v1/chat/completions, both logged', async () => {
    const insert = aiWorkflow(
      [
        {
          name: 'Insert',
          type: `${LC}.vectorStoreInMemory`,
          typeVersion: 1,
          parameters: { mode: 'insert', memoryKey: 'gw' },
        },
        { name: 'Loader', type: `${LC}.documentDefaultDataLoader`, typeVersion: 1.1, parameters: {} },
        embeddings,
      ],
      [
        ['Trigger', 'Insert'],
        ['Loader', 'Insert', 'ai_document'],
        ['Embeddings', 'Insert', 'ai_embedding'],
      ],
    );
    const inserted = await runFixture(insert, deps, [
      { json: { text: 'The gateway charges every call to the calling key.' } },
      { json: { text: 'Bananas are yellow.' } },
    ]);
    expect(inserted.outcome.state.error).toBeNull();
    expect(inserted.outputs.Insert).toHaveLength(2);

    const qa = aiWorkflow(
      [
        {
          name: 'QA',
          type: `${LC}.chainRetrievalQa`,
          typeVersion: 1.7,
          parameters: { promptType: 'define', text: 'Who is charged for a call?' },
        },
        {
          name: 'Model',
          type: `${LC}.lmChatOpenAi`,
          typeVersion: 1.2,
          parameters: { model: { __rl: true, mode: 'list', value: 'gpt-4o-mini' }, options: {} },
          credentials: { openAiApi: { id: 'gw', name: 'Platform' } },
        },
        { name: 'Retriever', type: `${LC}.retrieverVectorStore`, typeVersion: 1, parameters: { topK: 1 } },
        { name: 'Store', type: `${LC}.vectorStoreInMemory`, typeVersion: 1, parameters: { memoryKey: 'gw' } },
        embeddings,
      ],
      [
        ['Trigger', 'QA'],
        ['Model', 'QA', 'ai_languageModel'],
        ['Retriever', 'QA', 'ai_retriever'],
        ['Store', 'Retriever', 'ai_vectorStore'],
        ['Embeddings', 'Store', 'ai_embedding'],
      ],
    );
    const answered = await runFixture(qa, deps);
    expect(answered.outcome.state.error).toBeNull();
    expect(typeof answered.outputs.QA?.[0]?.response).toBe('string');
    // The answer came from the gateway's upstream, with the retrieved passage in the system prompt.
    const sent = bed.openai.requests.at(-1)?.body as { messages: Array<{ role: string; content: string }> };
    expect(sent.messages[0]?.content).toContain('The gateway charges every call to the calling key.');
    const calls = await bed.p.request({ method: 'GET', url: '/v1/llm/requests?limit=10' });
    const models = (calls.json() as { data: Array<{ model: string; status: string }> }).data.map(
      (d) => d.model,
    );
    expect(models).toContain('gpt-4o-mini');
    expect(models).toContain('builtin/hashed-ngrams');
  });

  it("an AI Agent node on a gateway model is charged to the credential's key: logged, and stopped by its budget", async () => {
    const { key, id } = await bed.p.createKey({
      name: 'agent budget',
      type: 'development',
      services: ['llm'],
      role: 'Writer',
      dailyTokenBudget: 30,
    });
    const agent = aiWorkflow(
      [
        {
          name: 'AI Agent',
          type: `${LC}.agent`,
          typeVersion: 2,
          parameters: { promptType: 'define', text: 'Say something about budgets, please.' },
        },
        {
          name: 'Model',
          type: `${LC}.lmChatOpenAi`,
          typeVersion: 1.2,
          parameters: { model: { __rl: true, mode: 'list', value: 'gpt-4o-mini' }, options: {} },
          credentials: { openAiApi: { id: 'gw', name: 'Platform' } },
        },
      ],
      [
        ['Trigger', 'AI Agent'],
        ['Model', 'AI Agent', 'ai_languageModel'],
      ],
    );
    const budgeted: Partial<EngineDeps> = {
      ...deps,
      credential: async () => ({ apiKey: key, url: `${bed.url}/v1` }),
    };
    const first = await runFixture(agent, budgeted);
    expect(first.outcome.state.error).toBeNull();
    expect(typeof first.outputs['AI Agent']?.[0]?.output).toBe('string');
    const logged = await bed.p.request({ method: 'GET', url: `/v1/llm/requests?keyId=${id}` });
    const calls = (logged.json() as { data: Array<Record<string, unknown>> }).data;
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ keyId: id, model: 'gpt-4o-mini', status: 'success' });
    expect(Number(calls[0]?.promptTokens)).toBeGreaterThan(0);
    // Each run spends the key's daily tokens; once spent, the node fails with the gateway's 429.
    let last = first;
    for (let i = 0; i < 10 && last.outcome.state.error === null; i++)
      last = await runFixture(agent, budgeted);
    expect(JSON.stringify(last.outcome.state.error)).toMatch(/token budget/i);
  });
});
