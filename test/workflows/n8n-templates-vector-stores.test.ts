import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp, type OutboundHttp } from '../../src/core/http/outbound.js';
import type { EngineDeps } from '../../src/modules/workflows/engine/types.js';
import { type AiNodeSpec, aiWorkflow, chatModel, embeddingsOpenAi, LC } from './support/ai-workflow.js';
import { FakeEmbeddings } from './support/fake-embeddings.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { FakePinecone, PINECONE_HOST_SUFFIX } from './support/fake-pinecone.js';
import { FakeQdrant } from './support/fake-qdrant.js';
import { runFixture } from './support/n8n-fixtures.js';

/**
 * n8n's Qdrant and Pinecone vector stores and Embeddings Mistral against local servers speaking the
 * real wire formats: a Qdrant (REST API, points kept in memory, exact cosine search, Qdrant's filters),
 * a Pinecone (control plane and index data plane; its public hosts rerouted by the outbound function as
 * the other template tests do), an OpenAI/Ollama/Mistral embeddings upstream and an OpenAI chat upstream.
 * Hand-built workflows here; the real template exports in the second half.
 */

const openai = new FakeOpenAi();
const embed = new FakeEmbeddings();
const qdrant = new FakeQdrant();
const pinecone = new FakePinecone();
let guarded: OutboundHttp;
let deps: Partial<EngineDeps>;

const CREDENTIALS: Record<string, () => Record<string, string>> = {
  '123': () => ({ apiKey: 'test-api-key', url: `${openai.base}/v1` }),
  embed: () => ({ apiKey: 'embed-key', url: `${embed.base}/v1` }),
  mistral: () => ({ apiKey: 'ms-key', url: `${embed.base}/v1` }),
  qdrant: () => ({ qdrantUrl: qdrant.base, apiKey: 'qd-key' }),
  qdrantOpen: () => ({ qdrantUrl: `${qdrant.base}/` }),
  qdrantBadUrl: () => ({ qdrantUrl: 'localhost:6333' }),
  pinecone: () => ({ apiKey: 'pc-key' }),
  pineconeWrong: () => ({ apiKey: 'wrong' }),
};

beforeAll(async () => {
  await Promise.all([openai.start(), embed.start(), qdrant.start(), pinecone.start()]);
  guarded = createOutboundHttp({
    allowHosts: [openai.base, embed.base, qdrant.base, pinecone.base].map((b) => new URL(b).host),
    timeoutMs: 10_000,
  });
  deps = {
    http: pinecone.route(guarded),
    tenant: 'acct_vector_stores',
    credential: async (id) => {
      const found = CREDENTIALS[id];
      if (!found) throw new Error(`Credential '${id}' not found`);
      return found();
    },
  };
});
afterAll(() => Promise.all([openai.stop(), embed.stop(), qdrant.stop(), pinecone.stop()]));
beforeEach(() => {
  openai.reset();
  embed.reset();
  qdrant.reset();
  pinecone.reset();
});

const CITIES = [
  { city: 'Berlin', text: 'Berlin is the capital of Germany on the river Spree.' },
  { city: 'Prague', text: 'Prague is the capital of the Czech Republic on the Vltava river.' },
  { city: 'Kyiv', text: 'Kyiv is the capital of Ukraine on the Dnieper river.' },
];
const cityItems = () => CITIES.map((c) => ({ json: c }));

const loader = (): AiNodeSpec => ({
  name: 'Loader',
  type: `${LC}.documentDefaultDataLoader`,
  typeVersion: 1.1,
  parameters: {
    jsonMode: 'expressionData',
    jsonData: '={{ $json.text }}',
    options: { metadata: { metadataValues: [{ name: 'city', value: '={{ $json.city }}' }] } },
  },
});

const qdrantNode = (parameters: Record<string, unknown>, cred = 'qdrant', name = 'Store'): AiNodeSpec => ({
  name,
  type: `${LC}.vectorStoreQdrant`,
  typeVersion: 1.1,
  parameters: { qdrantCollection: { __rl: true, mode: 'list', value: 'cities' }, ...parameters },
  credentials: { qdrantApi: { id: cred, name: 'Qdrant' } },
});

const pineconeNode = (
  parameters: Record<string, unknown>,
  cred = 'pinecone',
  name = 'Store',
): AiNodeSpec => ({
  name,
  type: `${LC}.vectorStorePinecone`,
  typeVersion: 1,
  parameters: { pineconeIndex: { __rl: true, mode: 'list', value: 'cities' }, ...parameters },
  credentials: { pineconeApi: { id: cred, name: 'Pinecone' } },
});

const mistralEmbeddings = (parameters: Record<string, unknown> = { options: {} }): AiNodeSpec => ({
  name: 'Embeddings',
  type: `${LC}.embeddingsMistralCloud`,
  typeVersion: 1,
  parameters,
  credentials: { mistralCloudApi: { id: 'mistral', name: 'Mistral' } },
});

/** Inserts the cities through `store` (loader with a `city` metadata field, then the embeddings). */
const insertWorkflow = (store: AiNodeSpec, embeddings: AiNodeSpec = embeddingsOpenAi()) =>
  aiWorkflow(
    [store, loader(), embeddings],
    [
      ['Trigger', store.name],
      ['Loader', store.name, 'ai_document'],
      [embeddings.name, store.name, 'ai_embedding'],
    ],
  );

const loadWorkflow = (store: AiNodeSpec, embeddings: AiNodeSpec = embeddingsOpenAi()) =>
  aiWorkflow(
    [store, embeddings],
    [
      ['Trigger', store.name],
      [embeddings.name, store.name, 'ai_embedding'],
    ],
  );

/** An agent asked about Kyiv with one tool. */
const agentWith = (tool: AiNodeSpec, extra: AiNodeSpec[], edges: Array<[string, string, string?]>) =>
  aiWorkflow(
    [
      {
        name: 'AI Agent',
        type: `${LC}.agent`,
        typeVersion: 1.7,
        parameters: { promptType: 'define', text: 'Where is Kyiv?', options: { maxIterations: 3 } },
      },
      chatModel(),
      tool,
      ...extra,
    ],
    [
      ['Trigger', 'AI Agent'],
      ['Model', 'AI Agent', 'ai_languageModel'],
      [tool.name, 'AI Agent', 'ai_tool'],
      ...edges,
    ],
  );

const toolResult = (i: number) =>
  ((openai.requests[i]?.messages ?? []) as Array<{ role: string; content: string }>).at(-1);

describe('Qdrant Vector Store', () => {
  it('insert creates the collection and upserts LangChain points; load answers the nearest', async () => {
    qdrant.apiKey = 'qd-key';
    const inserted = await runFixture(insertWorkflow(qdrantNode({ mode: 'insert' })), deps, cityItems());
    expect(inserted.outcome.state.error).toBeNull();
    expect(inserted.outputs.Store).toHaveLength(3);
    // Created as LangChain does: the embeddings' size, cosine; then points upserted and waited for.
    expect(qdrant.calls('PUT', '/collections/cities')[0]?.body).toEqual({
      vectors: { size: 256, distance: 'Cosine' },
    });
    const upserts = qdrant.calls('PUT', '/collections/cities/points');
    expect(upserts.map((u) => u.url)).toEqual(Array(3).fill('/collections/cities/points?wait=true'));
    const point = (upserts[0]?.body as { points?: Array<Record<string, unknown>> } | undefined)?.points?.[0];
    expect(point?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(point?.payload).toEqual({
      content: CITIES[0]?.text,
      metadata: {
        source: 'blob',
        blobType: 'text/plain',
        city: 'Berlin',
        loc: { lines: { from: 1, to: 1 } },
      },
    });
    expect(qdrant.requests.every((r) => r.headers['api-key'] === 'qd-key')).toBe(true);

    const { outcome, outputs } = await runFixture(
      loadWorkflow(qdrantNode({ mode: 'load', prompt: 'Kyiv Ukraine Dnieper', topK: 2 })),
      deps,
    );
    expect(outcome.state.error).toBeNull();
    const found = outputs.Store ?? [];
    expect(found).toHaveLength(2);
    expect(found[0]).toMatchObject({
      document: { pageContent: CITIES[2]?.text, metadata: { city: 'Kyiv' } },
    });
    expect(Number(found[0]?.score)).toBeGreaterThan(Number(found[1]?.score));
    expect(qdrant.calls('POST', '/collections/cities/points/search')[0]?.body).toMatchObject({
      limit: 2,
      with_payload: ['metadata', 'content'],
      with_vector: false,
    });
  });

  it('the search filter (JSON text) and custom payload keys; a collection config on insert', async () => {
    const keys = { contentPayloadKey: 'page_content', metadataPayloadKey: 'meta' };
    const inserted = await runFixture(
      insertWorkflow(
        qdrantNode({
          mode: 'insert',
          options: { ...keys, collectionConfig: '{"vectors": {"size": 256, "distance": "Dot"}}' },
        }),
      ),
      deps,
      cityItems(),
    );
    expect(inserted.outcome.state.error).toBeNull();
    expect(qdrant.collections.get('cities')?.distance).toBe('Dot');
    const [stored] = [...(qdrant.collections.get('cities')?.points.values() ?? [])];
    expect(Object.keys(stored?.payload ?? {})).toEqual(['page_content', 'meta']);

    const filter = '{"must": [{"key": "meta.city", "match": {"value": "Prague"}}]}';
    const { outcome, outputs } = await runFixture(
      loadWorkflow(
        qdrantNode({
          mode: 'load',
          prompt: 'Kyiv Ukraine Dnieper',
          options: { ...keys, searchFilterJson: filter },
        }),
      ),
      deps,
    );
    expect(outcome.state.error).toBeNull();
    expect(
      (outputs.Store ?? []).map((d) => (d.document as { metadata: { city: string } }).metadata.city),
    ).toEqual(['Prague']);
    expect(qdrant.calls('POST', '/collections/cities/points/search')[0]?.body).toMatchObject({
      filter: JSON.parse(filter),
      with_payload: ['meta', 'page_content'],
    });
  });

  it('retrieve-as-tool in an AI Agent, with Embeddings Mistral', async () => {
    const inserted = await runFixture(
      insertWorkflow(qdrantNode({ mode: 'insert' }, 'qdrantOpen'), mistralEmbeddings()),
      deps,
      cityItems(),
    );
    expect(inserted.outcome.state.error).toBeNull();
    openai.queue(
      toolCalls([
        { id: 'c1', name: 'city_facts', arguments: JSON.stringify({ input: 'Kyiv Ukraine Dnieper' }) },
      ]),
      completion('Kyiv is on the Dnieper.'),
    );
    const tool = qdrantNode(
      { mode: 'retrieve-as-tool', toolName: 'city_facts', toolDescription: 'Facts about cities', topK: 1 },
      'qdrantOpen',
      'Cities',
    );
    const { outcome, outputs } = await runFixture(
      agentWith(
        { ...tool, typeVersion: 1.2 },
        [mistralEmbeddings()],
        [['Embeddings', 'Cities', 'ai_embedding']],
      ),
      deps,
    );
    expect(outcome.state.error).toBeNull();
    expect(outputs['AI Agent']).toEqual([{ output: 'Kyiv is on the Dnieper.' }]);
    const offered = (openai.requests[0]?.tools ?? []) as Array<{
      function: { name: string; description: string };
    }>;
    expect(offered[0]?.function).toMatchObject({ name: 'city_facts', description: 'Facts about cities' });
    expect(toolResult(1)?.role).toBe('tool');
    const docs = JSON.parse(toolResult(1)?.content ?? '[]') as Array<{ metadata: { city: string } }>;
    expect(docs.map((d) => d.metadata.city)).toEqual(['Kyiv']);
    // Mistral's embeddings wire: the key as a bearer token, mistral-embed, OpenAI's body.
    const call = embed.requests.at(-1);
    expect(call?.path).toBe('/v1/embeddings');
    expect(call?.headers.authorization).toBe('Bearer ms-key');
    expect(call?.body).toEqual({
      model: 'mistral-embed',
      input: ['Kyiv Ukraine Dnieper'],
      encoding_format: 'float',
    });
    // No api-key header when the credential has none.
    expect(qdrant.requests.every((r) => r.headers['api-key'] === undefined)).toBe(true);
  });

  it('bad input: a missing collection, a refused key, a 500, garbage, a bad filter or URL — node errors', async () => {
    const load = (parameters: Record<string, unknown> = {}, cred = 'qdrant') =>
      runFixture(loadWorkflow(qdrantNode({ mode: 'load', prompt: 'Kyiv', ...parameters }, cred)), deps);

    const missing = await load();
    expect(missing.outcome.state.error?.message).toBe("The Qdrant collection 'cities' does not exist");

    qdrant.apiKey = 'other';
    expect((await load()).outcome.state.error?.message).toBe(
      'Qdrant refused the search (401): Invalid api-key',
    );
    qdrant.apiKey = null;

    qdrant.failWith = {
      status: 500,
      body: '{"status":{"error":"Service internal error: disk full"},"time":0}',
    };
    expect((await load()).outcome.state.error?.message).toBe(
      'Qdrant refused the search (500): Service internal error: disk full',
    );
    qdrant.failWith = { status: 200, body: '<html>proxy</html>' };
    expect((await load()).outcome.state.error?.message).toBe(
      'Qdrant answered the search with a body that is not JSON',
    );
    qdrant.failWith = { status: 200, body: '{"result": {"points": []}}' };
    expect((await load()).outcome.state.error?.message).toBe(
      'Qdrant answered the search without a result list',
    );
    qdrant.failWith = null;

    expect((await load({ options: { searchFilterJson: '{"must": [' } })).outcome.state.error?.message).toBe(
      'The search filter is not valid JSON',
    );
    expect((await load({ options: { searchFilterJson: '[1]' } })).outcome.state.error?.message).toBe(
      'The search filter must be a JSON object',
    );
    expect((await load({}, 'qdrantBadUrl')).outcome.state.error?.message).toBe(
      "The Qdrant URL 'localhost:6333' is not http(s)",
    );
    const noCredential = loadWorkflow(qdrantNode({ mode: 'load', prompt: 'Kyiv' }));
    delete noCredential.nodes.find((n) => n.name === 'Store')?.credentials;
    expect((await runFixture(noCredential, deps)).outcome.state.error?.message).toBe(
      'Node does not have any credentials set for "qdrantApi"',
    );
    // A vector size the collection does not have: Qdrant's own message.
    qdrant.collections.set('cities', { size: 3, distance: 'Cosine', config: {}, points: new Map() });
    const inserted = await runFixture(insertWorkflow(qdrantNode({ mode: 'insert' })), deps, cityItems());
    expect(inserted.outcome.state.error?.message).toBe(
      'Qdrant refused the points (400): Wrong input: Vector dimension error: expected dim: 3, got 256',
    );
  });

  it('a server that never answers fails the node at the outbound time limit', async () => {
    qdrant.hang = true;
    const started = Date.now();
    const { outcome } = await runFixture(loadWorkflow(qdrantNode({ mode: 'load', prompt: 'Kyiv' })), {
      ...deps,
      http: createOutboundHttp({
        allowHosts: [embed.base, qdrant.base].map((b) => new URL(b).host),
        timeoutMs: 500,
      }),
    });
    expect(outcome.state.error?.message).toBe('Outbound request timed out after 500 ms');
    expect(Date.now() - started).toBeLessThan(8_000);
  });
});

describe('Pinecone Vector Store', () => {
  it('insert into a namespace (cleared first) with flattened metadata; load with a metadata filter', async () => {
    pinecone.createIndex('cities', 256);
    pinecone.indexes.get('cities')?.namespaces.set('eu', new Map([['old', { values: [], metadata: {} }]]));
    const insert = pineconeNode({
      mode: 'insert',
      options: { pineconeNamespace: 'eu', clearNamespace: true },
    });
    const splitLoader = {
      ...loader(),
      parameters: { ...loader().parameters, textSplittingMode: 'custom' },
    };
    const wf = aiWorkflow(
      [
        insert,
        splitLoader,
        embeddingsOpenAi(),
        {
          name: 'Splitter',
          type: `${LC}.textSplitterRecursiveCharacterTextSplitter`,
          typeVersion: 1,
          parameters: { chunkSize: 1000, chunkOverlap: 0 },
        },
      ],
      [
        ['Trigger', 'Store'],
        ['Loader', 'Store', 'ai_document'],
        ['Embeddings', 'Store', 'ai_embedding'],
        ['Splitter', 'Loader', 'ai_textSplitter'],
      ],
    );
    const inserted = await runFixture(wf, deps, cityItems());
    expect(inserted.outcome.state.error).toBeNull();
    // The host from the control plane, then its data plane over https, the key in Api-Key.
    expect(pinecone.asked[0]).toBe('https://api.pinecone.io/indexes/cities');
    expect(pinecone.asked[1]).toBe(`https://cities${PINECONE_HOST_SUFFIX}/vectors/delete`);
    expect(pinecone.asked.filter((u) => u.endsWith('/vectors/upsert'))).toHaveLength(3);
    expect(pinecone.requests.every((r) => r.headers['api-key'] === 'pc-key')).toBe(true);
    expect(pinecone.requests[0]?.headers['x-pinecone-api-version']).toBe('2025-04');
    const records = pinecone.records('cities', 'eu');
    expect(records.map((r) => r.metadata.city)).toEqual(['Berlin', 'Prague', 'Kyiv']);
    // LangChain's PineconeStore metadata: the text under `text`, nested objects flattened.
    expect(records[0]?.metadata).toEqual({
      source: 'blob',
      blobType: 'text/plain',
      city: 'Berlin',
      'loc.lines.from': 1,
      'loc.lines.to': 1,
      text: CITIES[0]?.text,
    });

    const { outcome, outputs } = await runFixture(
      loadWorkflow(
        pineconeNode({
          mode: 'load',
          prompt: 'Kyiv Ukraine Dnieper',
          options: {
            pineconeNamespace: 'eu',
            metadata: { metadataValues: [{ name: 'city', value: 'Prague' }] },
          },
        }),
      ),
      deps,
    );
    expect(outcome.state.error).toBeNull();
    expect(outputs.Store).toEqual([
      {
        document: {
          pageContent: CITIES[1]?.text,
          metadata: {
            source: 'blob',
            blobType: 'text/plain',
            city: 'Prague',
            'loc.lines.from': 1,
            'loc.lines.to': 1,
          },
        },
        score: expect.any(Number),
      },
    ]);
    const query = pinecone.requests.find((r) => r.url.endsWith('/query'))?.body;
    expect(query).toMatchObject({
      topK: 4,
      includeMetadata: true,
      namespace: 'eu',
      filter: { city: 'Prague' },
    });
  });

  it('update replaces the record of an id with the item’s one document', async () => {
    pinecone.createIndex('cities', 256);
    const wf = aiWorkflow(
      [pineconeNode({ mode: 'update', id: 'rec-7' }), embeddingsOpenAi()],
      [
        ['Trigger', 'Store'],
        ['Embeddings', 'Store', 'ai_embedding'],
      ],
    );
    const { outcome, outputs } = await runFixture(wf, deps, [
      { json: { text: 'Vienna lies on the Danube.' } },
    ]);
    expect(outcome.state.error).toBeNull();
    expect(outputs.Store).toEqual([
      {
        pageContent: 'Vienna lies on the Danube.',
        metadata: { source: 'blob', blobType: 'application/json', line: 1 },
      },
    ]);
    expect(pinecone.records('cities').map((r) => [r.id, r.metadata.text])).toEqual([
      ['rec-7', 'Vienna lies on the Danube.'],
    ]);
    const two = await runFixture(wf, deps, [{ json: { a: 'one text', b: 'another' } }]);
    expect(two.outcome.state.error?.message).toBe('Single document per item expected');
  });

  it('as the store of a Vector Store Retriever in a Question and Answer Chain', async () => {
    pinecone.createIndex('cities', 256);
    expect(
      (await runFixture(insertWorkflow(pineconeNode({ mode: 'insert' })), deps, cityItems())).outcome.state
        .error,
    ).toBeNull();
    openai.queue(completion('On the Vltava.'));
    const wf = aiWorkflow(
      [
        {
          name: 'QA',
          type: `${LC}.chainRetrievalQa`,
          typeVersion: 1.4,
          parameters: {
            promptType: 'define',
            text: 'Which river flows through Prague Czech Vltava?',
            options: {},
          },
        },
        chatModel(),
        { name: 'Retriever', type: `${LC}.retrieverVectorStore`, typeVersion: 1, parameters: { topK: 1 } },
        pineconeNode({}),
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
    const { outcome, outputs } = await runFixture(wf, deps);
    expect(outcome.state.error).toBeNull();
    expect(outputs.QA).toEqual([{ response: { text: 'On the Vltava.' } }]);
    const system = ((openai.requests[0]?.messages ?? []) as Array<{ content: string }>)[0]?.content ?? '';
    expect(system).toContain(CITIES[1]?.text);
    expect(system).not.toContain(CITIES[0]?.text);
  });

  it('bad input: an index that does not exist, a wrong key, a wrong dimension, garbage, a hang', async () => {
    const load = (cred = 'pinecone', over: Partial<EngineDeps> = {}) =>
      runFixture(loadWorkflow(pineconeNode({ mode: 'load', prompt: 'Kyiv' }, cred)), { ...deps, ...over });
    const missing = await load();
    expect(missing.outcome.state.error?.message).toBe('Index cities not found');
    expect(missing.outcome.state.error?.description).toBe(
      'Please check that the index exists in your vector store',
    );
    pinecone.createIndex('cities', 3);
    expect((await load('pineconeWrong')).outcome.state.error?.message).toBe(
      'Pinecone refused describing the index (401): Invalid API Key',
    );
    expect((await load()).outcome.state.error?.message).toBe(
      'Pinecone refused the query (400): Vector dimension 256 does not match the dimension of the index 3',
    );
    pinecone.failWith = { status: 200, body: 'not json' };
    expect((await load()).outcome.state.error?.message).toBe(
      'Pinecone answered describing the index with a body that is not JSON',
    );
    pinecone.failWith = null;
    pinecone.hang = true;
    const hung = await load('pinecone', {
      http: pinecone.route(
        createOutboundHttp({
          allowHosts: [embed.base, pinecone.base].map((b) => new URL(b).host),
          timeoutMs: 500,
        }),
      ),
    });
    expect(hung.outcome.state.error?.message).toBe('Outbound request timed out after 500 ms');
  });
});

describe('Embeddings Mistral', () => {
  it('batches, strips new lines unless told not to, and names Mistral’s refusal', async () => {
    const wf = (options: Record<string, unknown>) =>
      insertWorkflow(qdrantNode({ mode: 'insert' }), mistralEmbeddings({ model: 'mistral-embed', options }));
    const lines = [{ json: { city: 'Oslo', text: 'Oslo is\nthe capital\nof Norway.' } }];
    expect((await runFixture(wf({}), deps, lines)).outcome.state.error).toBeNull();
    expect(embed.requests[0]?.body.input).toEqual(['Oslo is the capital of Norway.']);
    embed.reset();
    qdrant.reset();
    // One item whose JSON gives three documents (one per text value): embedded in batches of two.
    const batched = aiWorkflow(
      [
        qdrantNode({ mode: 'insert' }),
        { ...loader(), parameters: { jsonMode: 'allInputData' } },
        mistralEmbeddings({ options: { batchSize: 2 } }),
      ],
      [
        ['Trigger', 'Store'],
        ['Loader', 'Store', 'ai_document'],
        ['Embeddings', 'Store', 'ai_embedding'],
      ],
    );
    const three = [{ json: { a: 'Oslo is in Norway.', b: 'Bergen too.', c: 'Tromsø is far north.' } }];
    expect((await runFixture(batched, deps, three)).outcome.state.error).toBeNull();
    expect(embed.requests.map((r) => (r.body.input as string[]).length)).toEqual([2, 1]);
    const nl = await runFixture(wf({ stripNewLines: false }), deps, lines);
    expect(nl.outcome.state.error).toBeNull();
    expect(embed.requests.at(-1)?.body.input).toEqual(['Oslo is\nthe capital\nof Norway.']);
    embed.failWith = { status: 401, body: '{"message":"Unauthorized","request_id":"r1"}' };
    const refused = await runFixture(wf({}), deps, lines);
    expect(refused.outcome.state.error?.message).toContain('Mistral refused the embeddings request (401)');
  });
});
