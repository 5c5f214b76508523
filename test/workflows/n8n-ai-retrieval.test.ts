import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import type { EngineDeps } from '../../src/modules/workflows/engine/types.js';
import {
  splitCharacter,
  splitRecursive,
} from '../../src/modules/workflows/nodes/langchain/text-splitter/split.js';
import { aiWorkflow, chatModel, embeddingsOpenAi, LC } from './support/ai-workflow.js';
import { FakeEmbeddings } from './support/fake-embeddings.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { loadFixture, runFixture } from './support/n8n-fixtures.js';

/**
 * n8n's retrieval nodes — Default Data Loader, text splitters, Embeddings OpenAI/Ollama, the Simple
 * (in-memory) Vector Store, the Vector Store Retriever and Tool, the Question and Answer and the
 * Summarization chains — against local OpenAI and Ollama upstreams speaking their wire formats.
 */

const openai = new FakeOpenAi();
const embed = new FakeEmbeddings();
let deps: Partial<EngineDeps>;
/** The messages of the upstream's request `i`. */
const msgs = (i: number) => (openai.requests[i]?.messages ?? []) as Array<{ role: string; content: string }>;
const depsFor = (tenant: string): Partial<EngineDeps> => ({ ...deps, tenant });

beforeAll(async () => {
  await Promise.all([openai.start(), embed.start()]);
  const http = createOutboundHttp({
    allowHosts: [openai.base, embed.base].map((b) => new URL(b).host),
    timeoutMs: 10_000,
  });
  deps = {
    http,
    tenant: 'acct_retrieval',
    credential: async (id): Promise<Record<string, string>> => {
      if (id === '123') return { apiKey: 'test-api-key', url: `${openai.base}/v1` };
      if (id === 'embed') return { apiKey: 'embed-key', url: `${embed.base}/v1` };
      if (id === 'ollama') return { baseUrl: embed.base };
      throw new Error(`Credential '${id}' not found`);
    },
  };
});
afterAll(() => Promise.all([openai.stop(), embed.stop()]));
beforeEach(() => {
  openai.reset();
  embed.reset();
});

const CITIES = [
  'Berlin is the capital of Germany.\nBerlin lies on the river Spree.',
  'Prague is the capital of the Czech Republic,\non the Vltava river.',
  'Kyiv is the capital of Ukraine,\non the Dnieper river.',
];

/** Inserts the cities into the store `key`: loader (expression text) + recursive splitter + embeddings. */
function insertWorkflow(key: string, loader: Record<string, unknown> = {}) {
  return aiWorkflow(
    [
      {
        name: 'Insert',
        type: `${LC}.vectorStoreInMemory`,
        typeVersion: 1.1,
        parameters: { mode: 'insert', memoryKey: { __rl: true, mode: 'list', value: key } },
      },
      {
        name: 'Loader',
        type: `${LC}.documentDefaultDataLoader`,
        typeVersion: 1.1,
        parameters: {
          jsonMode: 'expressionData',
          jsonData: '={{ $json.text }}',
          textSplittingMode: 'custom',
          options: { metadata: { metadataValues: [{ name: 'city', value: '={{ $json.city }}' }] } },
          ...loader,
        },
      },
      {
        name: 'Splitter',
        type: `${LC}.textSplitterRecursiveCharacterTextSplitter`,
        typeVersion: 1,
        parameters: { chunkSize: 40, chunkOverlap: 0 },
      },
      embeddingsOpenAi(),
    ],
    [
      ['Trigger', 'Insert'],
      ['Loader', 'Insert', 'ai_document'],
      ['Splitter', 'Loader', 'ai_textSplitter'],
      ['Embeddings', 'Insert', 'ai_embedding'],
    ],
  );
}

const cityItems = () => CITIES.map((text) => ({ json: { city: text.split(' ')[0] ?? '', text } }));

async function insertCities(key: string, tenant = 'acct_retrieval') {
  const run = await runFixture(insertWorkflow(key), depsFor(tenant), cityItems());
  expect(run.outcome.state.error).toBeNull();
  return run;
}

function qaWorkflow(key: string, version: number, topK = 2) {
  return aiWorkflow(
    [
      {
        name: 'QA',
        type: `${LC}.chainRetrievalQa`,
        typeVersion: version,
        parameters: { promptType: 'define', text: '={{ $json.q }}', options: {} },
      },
      chatModel(),
      { name: 'Retriever', type: `${LC}.retrieverVectorStore`, typeVersion: 1, parameters: { topK } },
      {
        name: 'Store',
        type: `${LC}.vectorStoreInMemory`,
        typeVersion: 1,
        parameters: { mode: 'retrieve', memoryKey: key },
      },
      embeddingsOpenAi(),
    ],
    [
      ['Trigger', 'QA'],
      ['Model', 'QA', 'ai_languageModel'],
      ['Retriever', 'QA', 'ai_retriever'],
      ['Store', 'Retriever', 'ai_vectorStore'],
      ['Embeddings', 'Store', 'ai_embedding'],
    ],
  );
}

describe('Simple Vector Store: insert, load, and the Question and Answer Chain', () => {
  it('inserts chunks with metadata (loader + splitter), embedded over the OpenAI wire format', async () => {
    const { outputs } = await insertCities('kb-insert');
    const inserted = outputs.Insert ?? [];
    // Each city's text is cut into chunks of at most 40 characters, each keeping the item's metadata.
    expect(inserted.length).toBeGreaterThan(3);
    for (const doc of inserted) expect(String(doc.pageContent).length).toBeLessThanOrEqual(40);
    expect(inserted[0]).toEqual({
      metadata: {
        source: 'blob',
        blobType: 'text/plain',
        city: 'Berlin',
        loc: { lines: { from: 1, to: 1 } },
      },
      pageContent: 'Berlin is the capital of Germany.',
    });
    const req = embed.requests[0];
    expect(req?.path).toBe('/v1/embeddings');
    expect(req?.headers.authorization).toBe('Bearer embed-key');
    expect(req?.body).toMatchObject({
      model: 'text-embedding-3-small',
      dimensions: 64,
      encoding_format: 'float',
    });
  });

  it('load mode answers the documents nearest the prompt, with scores', async () => {
    await insertCities('kb-load');
    const load = aiWorkflow(
      [
        {
          name: 'Load',
          type: `${LC}.vectorStoreInMemory`,
          typeVersion: 1,
          parameters: { mode: 'load', memoryKey: 'kb-load', prompt: 'Dnieper Ukraine', topK: 1 },
        },
        embeddingsOpenAi(),
      ],
      [
        ['Trigger', 'Load'],
        ['Embeddings', 'Load', 'ai_embedding'],
      ],
    );
    const { outcome, outputs } = await runFixture(load, deps);
    expect(outcome.state.error).toBeNull();
    expect(outputs.Load).toHaveLength(1);
    const first = outputs.Load?.[0] as {
      document: { pageContent: string; metadata: Record<string, unknown> };
      score: number;
    };
    expect(first.document.pageContent).toContain('Dnieper');
    expect(first.document.metadata.city).toBe('Kyiv');
    expect(first.score).toBeGreaterThan(0);
  });

  it('Q&A chain v1.7: the retrieved context in the system prompt, the question as the user turn', async () => {
    await insertCities('kb-qa');
    openai.queue(completion('Berlin lies on the Spree.'));
    const { outcome, outputs } = await runFixture(qaWorkflow('kb-qa', 1.7), deps, [
      { json: { q: 'Which river does Berlin lie on?' } },
    ]);
    expect(outcome.state.error).toBeNull();
    expect(outputs.QA).toEqual([{ response: 'Berlin lies on the Spree.' }]);
    const messages = msgs(0);
    expect(messages[0]?.role).toBe('system');
    expect(messages[0]?.content).toContain('You are an assistant for question-answering tasks.');
    expect(messages[0]?.content).toContain('Berlin lies on the river Spree.');
    expect(messages[1]).toEqual({ role: 'user', content: 'Which river does Berlin lie on?' });
  });

  it('Q&A chain before v1.5 answers {response: {text}}', async () => {
    await insertCities('kb-qa-old');
    openai.queue(completion('Prague.'));
    const { outputs } = await runFixture(qaWorkflow('kb-qa-old', 1.3), deps, [
      { json: { q: 'Which city is on the Vltava?' } },
    ]);
    expect(outputs.QA).toEqual([{ response: { text: 'Prague.' } }]);
  });

  it("one account never reads another's store under the same key", async () => {
    await insertCities('kb-shared', 'acct_a');
    openai.queue(completion("I don't know."));
    const { outcome } = await runFixture(qaWorkflow('kb-shared', 1.7), depsFor('acct_b'), [
      { json: { q: 'Which river does Berlin lie on?' } },
    ]);
    expect(outcome.state.error).toBeNull();
    const system = msgs(0)[0]?.content ?? '';
    expect(system).not.toContain('Berlin');
    expect(system.endsWith('Context: ')).toBe(true);
  });
});

describe('vector stores as tools of an agent', () => {
  const agent = (
    tool: Record<string, unknown>,
    extra: Parameters<typeof aiWorkflow>[0] = [],
    edges: Array<[string, string, string?]> = [],
  ) =>
    aiWorkflow(
      [
        {
          name: 'AI Agent',
          type: `${LC}.agent`,
          typeVersion: 3.1,
          parameters: { promptType: 'define', text: 'Where is Kyiv?', options: { maxIterations: 3 } },
        },
        chatModel(),
        tool as never,
        ...extra,
      ],
      [
        ['Trigger', 'AI Agent'],
        ['Model', 'AI Agent', 'ai_languageModel'],
        ['Tool', 'AI Agent', 'ai_tool'],
        ...edges,
      ],
    );

  it('retrieve-as-tool: the model searches the store, reads the documents as JSON', async () => {
    await insertCities('kb-tool');
    openai.queue(
      toolCalls([
        { id: 'c1', name: 'city_facts', arguments: JSON.stringify({ input: 'Kyiv Ukraine Dnieper' }) },
      ]),
      completion('Kyiv is on the Dnieper.'),
    );
    const wf = agent(
      {
        name: 'Tool',
        type: `${LC}.vectorStoreInMemory`,
        typeVersion: 1.1,
        parameters: {
          mode: 'retrieve-as-tool',
          memoryKey: { __rl: true, mode: 'list', value: 'kb-tool' },
          toolName: 'city_facts',
          toolDescription: 'Facts about cities',
          topK: 1,
        },
      },
      [embeddingsOpenAi()],
      [['Embeddings', 'Tool', 'ai_embedding']],
    );
    const { outcome, outputs } = await runFixture(wf, deps);
    expect(outcome.state.error).toBeNull();
    expect(outputs['AI Agent']).toEqual([{ output: 'Kyiv is on the Dnieper.' }]);
    const offered = (
      (openai.requests[0]?.tools ?? []) as Array<{ function: { name: string; description: string } }>
    )[0];
    expect(offered?.function).toMatchObject({ name: 'city_facts', description: 'Facts about cities' });
    const result = msgs(1).at(-1);
    expect(result?.role).toBe('tool');
    const docs = JSON.parse(result?.content ?? '[]') as Array<{
      pageContent: string;
      metadata: { city: string };
    }>;
    expect(docs).toHaveLength(1);
    expect(docs[0]?.metadata.city).toBe('Kyiv');
  });

  it('Vector Store Tool: the question answered by its own model from the store', async () => {
    await insertCities('kb-qa-tool');
    openai.queue(
      toolCalls([{ id: 'c1', name: 'Tool', arguments: JSON.stringify({ input: 'Dnieper river at Kyiv' }) }]),
      completion('The Dnieper.'),
      completion('Kyiv is on the Dnieper.'),
    );
    const wf = agent(
      {
        name: 'Tool',
        type: `${LC}.toolVectorStore`,
        typeVersion: 1.1,
        parameters: { description: 'city facts', topK: 1 },
      },
      [
        chatModel('Tool Model'),
        {
          name: 'Store',
          type: `${LC}.vectorStoreInMemory`,
          typeVersion: 1,
          parameters: { memoryKey: 'kb-qa-tool' },
        },
        embeddingsOpenAi(),
      ],
      [
        ['Tool Model', 'Tool', 'ai_languageModel'],
        ['Store', 'Tool', 'ai_vectorStore'],
        ['Embeddings', 'Store', 'ai_embedding'],
      ],
    );
    const { outcome, outputs } = await runFixture(wf, deps);
    expect(outcome.state.error).toBeNull();
    expect(outputs['AI Agent']).toEqual([{ output: 'Kyiv is on the Dnieper.' }]);
    const inner = msgs(1);
    expect(inner[0]?.content).toContain('Dnieper');
    expect(inner[1]).toEqual({ role: 'user', content: 'Dnieper river at Kyiv' });
    const back = msgs(2).at(-1);
    expect(back?.content).toBe('The Dnieper.');
  });
});

describe('Summarization Chain', () => {
  it('v2.1 per item (JSON text values, simple chunking, map_reduce within the limit): one combining call', async () => {
    openai.queue(completion('Three capitals.'), completion('One sentence.'));
    const wf = aiWorkflow(
      [
        { name: 'Summarize', type: `${LC}.chainSummarization`, typeVersion: 2.1, parameters: {} },
        chatModel(),
      ],
      [
        ['Trigger', 'Summarize'],
        ['Model', 'Summarize', 'ai_languageModel'],
      ],
    );
    const { outcome, outputs } = await runFixture(wf, deps, [
      { json: { a: CITIES[0] ?? '', b: { c: CITIES[1] ?? '' }, n: 3 } },
      { json: { a: 'Just one sentence.' } },
    ]);
    expect(outcome.state.error).toBeNull();
    expect(outputs.Summarize).toEqual([
      { output: { text: 'Three capitals.' } },
      { output: { text: 'One sentence.' } },
    ]);
    const prompt = msgs(0)[0];
    expect(prompt?.role).toBe('user');
    expect(prompt?.content).toBe(
      `Write a concise summary of the following:\n\n\n"${CITIES[0]}\n\n${CITIES[1]}"\n\n\nCONCISE SUMMARY:`,
    );
  });

  it('v2.1 refine: a first summary, refined by each next chunk', async () => {
    openai.queue(completion('S1'), completion('S2'));
    const wf = aiWorkflow(
      [
        {
          name: 'Summarize',
          type: `${LC}.chainSummarization`,
          typeVersion: 2.1,
          parameters: {
            chunkSize: 70,
            chunkOverlap: 0,
            options: { summarizationMethodAndPrompts: { values: { summarizationMethod: 'refine' } } },
          },
        },
        chatModel(),
      ],
      [
        ['Trigger', 'Summarize'],
        ['Model', 'Summarize', 'ai_languageModel'],
      ],
    );
    const { outputs } = await runFixture(wf, deps, [{ json: { text: `${CITIES[0]}\n\n${CITIES[1]}` } }]);
    expect(outputs.Summarize).toEqual([{ output: { output_text: 'S2' } }]);
    const second = msgs(1)[0]?.content ?? '';
    expect(second).toContain('existing summary up to a certain point: "S1"');
    expect(second).toContain(CITIES[1]);
  });

  it('v1 summarises all items’ documents from the attached loader at once', async () => {
    openai.queue(completion('All three.'));
    const wf = aiWorkflow(
      [
        {
          name: 'Summarize',
          type: `${LC}.chainSummarization`,
          typeVersion: 1,
          parameters: { type: 'stuff' },
        },
        chatModel(),
        {
          name: 'Loader',
          type: `${LC}.documentDefaultDataLoader`,
          typeVersion: 1,
          parameters: { jsonMode: 'expressionData', jsonData: '={{ $json.text }}' },
        },
      ],
      [
        ['Trigger', 'Summarize'],
        ['Model', 'Summarize', 'ai_languageModel'],
        ['Loader', 'Summarize', 'ai_document'],
      ],
    );
    const { outputs } = await runFixture(wf, deps, cityItems());
    expect(outputs.Summarize).toEqual([{ response: { text: 'All three.' } }]);
    expect(openai.requests).toHaveLength(1);
    const prompt = msgs(0)[0]?.content ?? '';
    for (const c of CITIES) expect(prompt).toContain(c);
  });
});

describe('Embeddings Ollama and bad input', () => {
  it('Embeddings Ollama: POST /api/embed with the model and the texts', async () => {
    const wf = insertWorkflow('kb-ollama');
    const node = wf.nodes.find((n) => n.name === 'Embeddings');
    Object.assign(node ?? {}, {
      type: `${LC}.embeddingsOllama`,
      typeVersion: 1,
      parameters: { model: 'nomic-embed-text' },
      credentials: { ollamaApi: { id: 'ollama', name: 'Ollama' } },
    });
    const { outcome } = await runFixture(wf, deps, cityItems().slice(0, 1));
    expect(outcome.state.error).toBeNull();
    expect(embed.requests[0]?.path).toBe('/api/embed');
    expect(embed.requests[0]?.body).toMatchObject({ model: 'nomic-embed-text' });
    expect(Array.isArray(embed.requests[0]?.body.input)).toBe(true);
  });

  it('an embeddings upstream that fails or answers garbage fails the node naming it', async () => {
    embed.failWith = { status: 401, body: '{"error":{"message":"bad key"}}' };
    const refused = await runFixture(insertWorkflow('kb-bad'), deps, cityItems());
    expect(refused.outcome.status).toBe('error');
    expect(refused.outcome.state.error?.message).toContain(
      'OpenAI refused the embeddings request (401): bad key',
    );
    embed.failWith = { status: 200, body: '{"data":[{"index":0,"embedding":["x"]}]}' };
    const garbage = await runFixture(insertWorkflow('kb-bad'), deps, cityItems().slice(0, 1));
    expect(garbage.outcome.state.error?.message).toMatch(/embeddings for|not a list of up to/);
  });

  it('a store attached in insert mode, or with no embeddings, is refused clearly', async () => {
    const wf = qaWorkflow('kb-x', 1.7);
    const store = wf.nodes.find((n) => n.name === 'Store');
    if (store) store.parameters = { mode: 'insert', memoryKey: 'kb-x' };
    const { outcome } = await runFixture(wf, deps, [{ json: { q: 'x' } }]);
    expect(outcome.state.error?.message).toContain("in 'insert' mode cannot be attached");
  });
});

describe('LangChain text splitters', () => {
  it('recursive: paragraphs, then lines, then words, merged up to the size with overlap', () => {
    const text = 'aaaa bbbb cccc\n\ndddd eeee\nffff gggg hhhh';
    expect(splitRecursive(text, { chunkSize: 10, chunkOverlap: 0 })).toEqual([
      'aaaa bbbb',
      'cccc',
      'dddd eeee',
      'ffff gggg',
      'hhhh',
    ]);
    expect(splitRecursive('one two three four five', { chunkSize: 10, chunkOverlap: 5 })).toEqual([
      'one two',
      'two three',
      'four five',
    ]);
    expect(() => splitRecursive('x', { chunkSize: 5, chunkOverlap: 5 })).toThrow('chunkOverlap >= chunkSize');
  });

  it('character: on one separator, merged', () => {
    expect(splitCharacter('a,b,c,d', ',', { chunkSize: 3, chunkOverlap: 0 })).toEqual(['a,b', 'c,d']);
    expect(splitCharacter('abcdefg', '', { chunkSize: 3, chunkOverlap: 0 })).toEqual(['abc', 'def', 'g']);
  });
});

describe("n8n's own In-memory vector store workflow (test/fixtures/n8n/ai/In_memory_vector_store.json)", () => {
  it('imported unmodified: refused at its first embeddings node, which has no credential', async () => {
    const { outcome, outputs } = await runFixture(
      loadFixture('ai/In_memory_vector_store.json'),
      depsFor('acct_fx_a'),
    );
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.message).toContain('No openAiApi credential is set on the node');
    expect(outputs.Code).toHaveLength(3);
  });

  it('with a credential chosen for its embeddings (as n8n’s editor does after import): inserts, then loads', async () => {
    const def = loadFixture('ai/In_memory_vector_store.json');
    for (const node of def.nodes)
      if (node.type.endsWith('.embeddingsOpenAi'))
        node.credentials = { openAiApi: { id: 'embed', name: 'OpenAI' } };
    const { outcome, outputs } = await runFixture(def, depsFor('acct_fx_b'));
    expect(outcome.state.error).toBeNull();
    const inserted = (outputs['Populate VS'] ?? []) as Array<{
      pageContent: string;
      metadata: Record<string, unknown>;
    }>;
    // Three Wikipedia texts cut by the Character Text Splitter (no separator: characters) at 300.
    expect(inserted.length).toBeGreaterThan(20);
    for (const d of inserted) expect(d.pageContent.length).toBeLessThanOrEqual(300);
    expect(inserted[0]?.pageContent.startsWith('Prague (/ˈprɑːɡ/ PRAHG')).toBe(true);
    expect(inserted[0]?.metadata).toMatchObject({ source: 'blob', blobType: 'text/plain' });
    // Get All VS (the trigger's second branch) ran before the store was filled: nothing yet. The store
    // outlives the execution (in process, per account and key, as n8n's): the next run loads 3.
    const order = Object.keys(outcome.state.runData);
    expect(order.indexOf('Get All VS')).toBeLessThan(order.indexOf('Populate VS'));
    expect(outputs['Get All VS']).toEqual([]);
    const again = await runFixture(def, depsFor('acct_fx_b'));
    expect(again.outputs['Get All VS']).toHaveLength(3);
    expect(Object.keys(again.outputs['Get All VS']?.[0] ?? {})).toEqual(['document', 'score']);
    expect(
      embed.requests.every((r) => r.body.model === 'text-embedding-3-small' && r.body.dimensions === 256),
    ).toBe(true);
    // The Question and Answer Chain has no main input: it does not run in a manual execution.
    expect(outputs['Question and Answer Chain']).toBeUndefined();
  });
});
