import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp, type OutboundHttp } from '../../src/core/http/outbound.js';
import { buildPdf } from '../../src/modules/documents/loaders/pdf-fixture.js';
import { ctx as runContext, testDeps } from '../../src/modules/workflows/engine/testing.js';
import type { EngineDeps, Item } from '../../src/modules/workflows/engine/types.js';
import { WorkflowEngine } from '../../src/modules/workflows/engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../src/modules/workflows/nodes/index.js';
import { type AiNodeSpec, aiWorkflow, chatModel, embeddingsOpenAi, LC } from './support/ai-workflow.js';
import { FakeEmbeddings, vectorOf } from './support/fake-embeddings.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { FakePinecone, PINECONE_HOST_SUFFIX } from './support/fake-pinecone.js';
import { FakeProvider, geminiText } from './support/fake-provider.js';
import { FakeQdrant } from './support/fake-qdrant.js';
import { loadFixture, type N8nExport, runFixture } from './support/n8n-fixtures.js';

/**
 * n8n's Qdrant and Pinecone vector stores and Embeddings Mistral against local servers speaking the
 * real wire formats: a Qdrant (REST API, points kept in memory, exact cosine search, Qdrant's filters),
 * a Pinecone (control plane and index data plane; its public hosts rerouted by the outbound function as
 * the other template tests do), an OpenAI/Ollama/Mistral embeddings upstream and an OpenAI chat upstream.
 * Hand-built workflows here; the real template exports in the second half.
 */

/** A local web server for the templates' public hosts: answers by method and path prefix, records each request. */
class FakeWeb {
  readonly requests: Array<{ method: string; url: string; body: string }> = [];
  private routes: Array<{ method: string; prefix: string; body: Buffer; type: string }> = [];
  private server: Server | null = null;
  base = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = req.url ?? '';
        this.requests.push({ method: req.method ?? '', url, body: Buffer.concat(chunks).toString('utf8') });
        const route = this.routes.find((r) => r.method === req.method && url.startsWith(r.prefix));
        if (!route) {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
          return;
        }
        res.writeHead(200, { 'content-type': route.type }).end(route.body);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Answers `method` requests whose path starts with `prefix`: JSON unless text or bytes of `type`. */
  route(method: string, prefix: string, body: unknown, type = 'application/json'): void {
    const bytes = Buffer.isBuffer(body)
      ? body
      : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    this.routes.push({ method, prefix, body: bytes, type });
  }

  reset(): void {
    this.requests.length = 0;
    this.routes = [];
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

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
  // The URL as another version of n8n's credential names it, with a trailing slash.
  qdrantOpen: () => ({ apiUrl: `${qdrant.base}/` }),
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

/**
 * The real template exports (test/fixtures/n8n/templates/, SOURCES-templates.md), imported unmodified.
 * Their public hosts (Bitrix24, HelloFresh, GitHub, OpenAI, Mistral, Pinecone) go to the local servers
 * through the outbound function; a Qdrant named by the credential is the local one.
 */
const gemini = new FakeProvider();
const web = new FakeWeb();
let templateDeps: Partial<EngineDeps>;

/** Public origins of the templates, to the local server standing in for each. */
const origins = (): Record<string, string> => ({
  'https://portal.bitrix24.test': web.base,
  'https://www.hellofresh.co.uk': web.base,
  'https://raw.githubusercontent.com': web.base,
  'https://api.mistral.ai': embed.base,
  'https://api.openai.com/v1/embeddings': `${embed.base}/v1/embeddings`,
  'https://api.openai.com': openai.base,
});

const TEMPLATE_CREDENTIALS: Record<string, () => Record<string, string>> = {
  // The exports' own credential ids.
  EIl2QxhXAS9Hkg37: () => ({ apiKey: 'ms-key' }),
  NyinAS3Pgfik66w5: () => ({ qdrantUrl: qdrant.base, apiKey: 'qd-key' }),
  tQLWnWRzD8aebYvp: () => ({ apiKey: 'sk-gh' }),
  bQTNry52ypGLqt47: () => ({ apiKey: 'pc-key' }),
  // The Bitrix24 export has none: the ones picked for its nodes after import (bitrixCredentials).
  qdrant: () => ({ qdrantUrl: qdrant.base }),
  ollama: () => ({ baseUrl: embed.base }),
  gemini: () => ({ apiKey: 'gm-key', host: gemini.base }),
};

beforeAll(async () => {
  await Promise.all([gemini.start(), web.start()]);
  const http = createOutboundHttp({
    allowHosts: [openai.base, embed.base, qdrant.base, pinecone.base, gemini.base, web.base].map(
      (b) => new URL(b).host,
    ),
    timeoutMs: 10_000,
  });
  templateDeps = {
    tenant: 'acct_vector_templates',
    http: pinecone.route((req) => {
      // The URL as a client sends it (WHATWG parsing drops the line break Bitrix24's domain field ends with).
      const url = new URL(req.url).toString();
      const origin = Object.keys(origins()).find((o) => url.startsWith(o));
      return http(origin ? { ...req, url: (origins()[origin] ?? '') + url.slice(origin.length) } : req);
    }),
    credential: async (id) => {
      const found = TEMPLATE_CREDENTIALS[id];
      if (!found) throw new Error(`Credential '${id}' not found`);
      return found();
    },
  };
});
afterAll(() => Promise.all([gemini.stop(), web.stop()]));
beforeEach(() => {
  gemini.reset();
  web.reset();
});

/** Runs an export from one of its trigger nodes (a workflow with several), after checking it imports. */
async function runFrom(def: N8nExport, nodeName: string, items: Item[], over: Partial<EngineDeps> = {}) {
  const engine = new WorkflowEngine(testDeps({ ...templateDeps, ...over }), defaultNodeRegistry);
  const withZone = { ...def, settings: { ...def.settings, timezone: 'America/New_York' } };
  expect(engine.validate(withZone)).toEqual([]);
  const outcome = await engine.run(withZone, { nodeName, items }, runContext);
  const outputs: Record<string, Array<Record<string, unknown>>> = {};
  for (const [name, runs] of Object.entries(outcome.state.runData))
    outputs[name] = (runs.at(-1)?.output[0] ?? []).map((i) => i.json);
  return { outcome, outputs };
}

describe('Qdrant, Embeddings Ollama and a Q&A chain on Gemini (template TBiW9x7O4ijo4yOX, Bitrix24)', () => {
  /** The export has no credentials: those a user picks for its nodes after importing it. */
  const bitrixCredentials = (def: N8nExport): N8nExport => {
    const picks: Record<string, Record<string, { id: string; name: string }>> = {
      'Qdrant Vector Store': { qdrantApi: { id: 'qdrant', name: 'Qdrant' } },
      'Qdrant Vector Store1': { qdrantApi: { id: 'qdrant', name: 'Qdrant' } },
      'Embeddings Ollama': { ollamaApi: { id: 'ollama', name: 'Ollama' } },
      'Embeddings Ollama1': { ollamaApi: { id: 'ollama', name: 'Ollama' } },
      'Google Gemini Chat Model': { googlePalmApi: { id: 'gemini', name: 'Gemini' } },
    };
    return {
      ...def,
      nodes: def.nodes.map((n) => (picks[n.name] ? { ...n, credentials: picks[n.name] } : n)),
    };
  };
  const PAGES = ['Reset: hold the button ten seconds.', 'Support hours: nine to five.'];

  it('the sub-workflow indexes the folder’s PDF into the Qdrant collection, page by page', async () => {
    const def = bitrixCredentials(loadFixture('templates/qdrant-bitrix24-rag-webhook.json'));
    web.route('POST', '/rest/disk.storage.getlist.json', { result: [{ ID: '7', NAME: 'Shared drive' }] });
    web.route('POST', '/rest/disk.storage.getchildren.json', {
      result: [{ ID: '31', NAME: 'Open line chat bot documents', TYPE: 'folder' }],
    });
    web.route('POST', '/rest/disk.folder.getchildren.json', {
      result: [
        {
          ID: '41',
          NAME: 'router.pdf',
          TYPE: 'file',
          DOWNLOAD_URL: 'https://portal.bitrix24.test/disk/downloadFile/41/?auth=tok',
        },
        { ID: '42', NAME: 'Vector stored', TYPE: 'folder' },
      ],
    });
    web.route('GET', '/disk/downloadFile/41/', buildPdf(PAGES), 'application/pdf');
    web.route('POST', '/rest/disk.file.moveto.json', { result: true });
    const { outcome, outputs } = await runFrom(def, 'Execute Workflow Trigger', [
      {
        json: {
          domain: 'portal.bitrix24.test',
          access_token: 'tok',
          storageName: 'Shared drive',
          folderName: 'Open line chat bot documents',
        },
      },
    ]);
    expect(outcome.state.error).toBeNull();
    // The Bitrix24 REST calls the template makes, with the token in the query.
    expect(web.requests.map((r) => `${r.method} ${r.url}`)).toEqual(
      expect.arrayContaining([
        'POST /rest/disk.storage.getlist.json?auth=tok',
        'POST /rest/disk.storage.getchildren.json?auth=tok',
        'POST /rest/disk.folder.getchildren.json?auth=tok',
        'GET /disk/downloadFile/41/?auth=tok',
      ]),
    );
    expect(JSON.parse(web.requests[0]?.body ?? '{}')).toEqual({
      filter: { ENTITY_TYPE: 'common', '%NAME': 'Shared drive' },
    });
    // Two pages, two documents, embedded over Ollama's wire with the template's model.
    expect(outputs['Qdrant Vector Store']?.map((d) => d.pageContent)).toEqual(PAGES);
    expect(embed.requests.at(-1)).toMatchObject({
      path: '/api/embed',
      body: { model: 'nomic-embed-text:latest' },
    });
    const points = [...(qdrant.collections.get('bitrix-docs')?.points.values() ?? [])];
    expect(points.map((p) => p.payload.content)).toEqual(PAGES);
    expect(points[0]?.payload.metadata).toMatchObject({ loc: { pageNumber: 1 } });
  });

  it('a chat message: the Q&A chain answers from the collection on Gemini, the answer is posted back', async () => {
    const def = bitrixCredentials(loadFixture('templates/qdrant-bitrix24-rag-webhook.json'));
    qdrant.collections.set('bitrix-docs', { size: 256, distance: 'Cosine', config: {}, points: new Map() });
    PAGES.forEach((text, i) => {
      qdrant.collections.get('bitrix-docs')?.points.set(`p${i}`, {
        id: `p${i}`,
        vector: vectorOf(text),
        payload: { content: text, metadata: { source: 'blob', loc: { pageNumber: i + 1 } } },
      });
    });
    gemini.queue(
      geminiText(
        '{"DIALOG_ID": "chat42", "AUTH": "tok", "DOMAIN": "portal.bitrix24.test", "MESSAGE": "Hold the button ten seconds."}',
      ),
    );
    web.route('POST', '/rest/imbot.message.add', { result: 12 });
    const { outcome, outputs } = await runFrom(def, 'Bitrix24 Handler', [
      {
        json: {
          headers: {},
          params: {},
          query: {},
          body: {
            event: 'ONIMBOTMESSAGEADD',
            'data[PARAMS][MESSAGE]': 'How do I reset the router?',
            'data[PARAMS][DIALOG_ID]': 'chat42',
            'data[PARAMS][CHAT_ENTITY_DATA_1]': 'Y|DEAL|1|N|N|s-77|0|0',
            'data[BOT][99][BOT_ID]': '99',
            'data[USER][ID]': '5',
            'auth[application_token]': 'app-token',
            'auth[domain]': 'portal.bitrix24.test',
            'auth[access_token]': 'tok',
          },
        },
      },
    ]);
    expect(outcome.state.error).toBeNull();
    // The retriever's topK (10) as Qdrant's limit; the reset page is the nearest, first in the context.
    expect(qdrant.calls('POST', '/collections/bitrix-docs/points/search')[0]?.body).toMatchObject({
      limit: 10,
    });
    const [call] = gemini.requests;
    expect(call?.url).toContain('gemini-2.0-flash:generateContent');
    const system = JSON.stringify(call?.body.systemInstruction ?? {});
    expect(system).toContain(PAGES[0]);
    expect(system.indexOf(PAGES[0] ?? '')).toBeLessThan(system.indexOf(PAGES[1] ?? ''));
    expect(system).toContain('**Use exactly** this value from the input: `chat42`');
    expect(JSON.stringify(call?.body.contents)).toContain('How do I reset the router?');
    expect(outputs['Prepare output parameters']).toEqual([
      {
        data: {
          DIALOG_ID: 'chat42',
          AUTH: 'tok',
          DOMAIN: 'portal.bitrix24.test',
          MESSAGE: 'Hold the button ten seconds.',
        },
      },
    ]);
    const sent = web.requests.find((r) => r.url.startsWith('/rest/imbot.message.add'));
    expect(sent?.url).toBe('/rest/imbot.message.add?auth=tok');
    expect(JSON.parse(sent?.body ?? '{}')).toEqual({
      DIALOG_ID: 'chat42',
      MESSAGE: 'Hold the button ten seconds.',
      AUTH: 'tok',
    });
    expect(outputs['Success Response']).toHaveLength(1);
  });
});

describe('Qdrant with Embeddings Mistral (template 2333, HelloFresh)', () => {
  it('the week’s recipes scraped, documented and inserted with their metadata; its Python step needs Python on', async () => {
    const course = (id: string, name: string, cuisine: string) => ({
      recipe: {
        id,
        name,
        cuisines: [{ name: cuisine }],
        category: { name: 'Main' },
        tags: [{ preferences: ['family', 'quick'] }],
        nutrition: [{ name: 'Energy', amount: 650, unit: 'kcal' }],
        websiteUrl: `https://www.hellofresh.co.uk/recipes/${id}`,
      },
    });
    const next = {
      props: {
        pageProps: {
          ssrPayload: {
            courses: [course('r1', 'Ramen', 'Asian'), course('r2', 'Chilli', 'Mexican')],
          },
        },
      },
    };
    web.route(
      'GET',
      '/menus/',
      `<html><body><script id="__NEXT_DATA__" type="application/json">${JSON.stringify(next)}</script></body></html>`,
      'text/html',
    );
    for (const [id, dish] of [
      ['r1', 'ramen'],
      ['r2', 'chilli'],
    ])
      web.route(
        'GET',
        `/recipes/${id}`,
        `<html><body><div data-test-id="recipe-description">A quick ${dish}.</div><div data-test-id="ingredients-list"><p>Noodles</p><p>Broth</p></div><div data-test-id="utensils">Pan</div><div data-test-id="instructions">Cook the ${dish}. <a href="/x">Tip</a></div></body></html>`,
        'text/html',
      );
    const def = loadFixture('templates/qdrant-mistral-hellofresh.json');
    // It imports with Python allowed (its two Code nodes are Python); this instance has it off at run time.
    const python = {
      filesDir: null,
      executeCommand: { enabled: false, timeoutMs: 1, maxOutputBytes: 1 },
      ssh: { enabled: false, timeoutMs: 1, maxOutputBytes: 1 },
      python: { enabled: true },
      tcpTarget: async () => {
        throw new Error('no TCP');
      },
    };
    expect(
      new WorkflowEngine(testDeps({ ...templateDeps, host: python }), defaultNodeRegistry).validate(def),
    ).toEqual([]);
    const engine = new WorkflowEngine(testDeps(templateDeps), defaultNodeRegistry);
    const outcome = await engine.run(
      def,
      { nodeName: 'When clicking "Test workflow"', items: [{ json: {} }] },
      runContext,
    );
    // The Qdrant branch ran; the Python Code node after it stops the run, naming the setting.
    expect(outcome.state.error?.message).toContain('Python in the Code node is off on this instance');
    expect(Object.keys(outcome.state.runData)).toContain('Qdrant Vector Store');
    const points = [...(qdrant.collections.get('hello_fresh')?.points.values() ?? [])];
    expect(points).toHaveLength(2);
    const first = points.find((p) => (p.payload.metadata as { recipe_id: string }).recipe_id === 'r1');
    expect(first?.payload.content).toBe(
      '# Ramen\nA quick ramen.\n\n# Website\nhttps://www.hellofresh.co.uk/recipes/r1\n\n## Ingredients\nNoodles\nBroth\n\n## Utensils\nPan\n\n## Nutrition\n* Energy: 650kcal\n\n## Instructions\nCook the ramen.',
    );
    // The loader reads `cuisines` and `tags`, which Prepare Documents renamed: empty, as in n8n.
    expect(first?.payload.metadata).toMatchObject({
      category: 'Main',
      recipe_id: 'r1',
      week: expect.stringMatching(/^\d{4}-W\d{1,2}$/),
    });
    // Mistral's embeddings API, the template's credential as a bearer token, its default model.
    expect(embed.requests[0]).toMatchObject({
      path: '/v1/embeddings',
      headers: { authorization: 'Bearer ms-key' },
      body: { model: 'mistral-embed' },
    });
    expect(qdrant.requests.every((r) => r.headers['api-key'] === 'qd-key')).toBe(true);
  });
});

describe('Pinecone and the Vector Store Tool (template "Chat with GitHub API Documentation")', () => {
  const SPEC = {
    openapi: '3.0.3',
    info: { title: 'GitHub v3 REST API', description: 'The REST API of GitHub.' },
    paths: {
      '/repos/{owner}/{repo}/issues': {
        get: {
          summary: 'List repository issues',
          description: 'List issues in a repository, open ones only.',
        },
      },
      '/user/repos': {
        post: {
          summary: 'Create a repository',
          description: 'Creates a new repository for the authenticated user.',
        },
      },
    },
  };

  it('indexes the OpenAPI document in Pinecone, then the agent answers through the Vector Store Tool', async () => {
    const def = loadFixture('templates/pinecone-github-api-docs.json');
    pinecone.createIndex('n8n-demo', 256);
    web.route(
      'GET',
      '/github/rest-api-description/refs/heads/main/descriptions/api.github.com/api.github.com.json',
      SPEC,
    );
    const indexed = await runFrom(def, 'When clicking ‘Test workflow’', [{ json: {} }]);
    expect(indexed.outcome.state.error).toBeNull();
    // n8n's JSON loader: one document per text value of the answer.
    const texts = pinecone.records('n8n-demo').map((r) => r.metadata.text);
    expect(texts).toEqual(
      expect.arrayContaining(['List issues in a repository, open ones only.', 'GitHub v3 REST API']),
    );
    expect(texts).toHaveLength(7);
    expect(pinecone.asked[0]).toBe('https://api.pinecone.io/indexes/n8n-demo');
    expect(embed.requests[0]?.headers.authorization).toBe('Bearer sk-gh');

    openai.queue(
      toolCalls([
        {
          id: 'call_1',
          name: 'GitHub_OpenAPI_Specification',
          arguments: JSON.stringify({ input: 'List issues in a repository' }),
        },
      ]),
      completion('GET /repos/{owner}/{repo}/issues lists them.'),
      completion('Use GET /repos/{owner}/{repo}/issues.'),
    );
    const chat = await runFrom(def, 'When chat message received', [
      {
        json: {
          sessionId: 's-gh',
          action: 'sendMessage',
          chatInput: 'How do I list the issues of a repository?',
        },
      },
    ]);
    expect(chat.outcome.state.error).toBeNull();
    expect(chat.outputs['AI Agent']).toEqual([{ output: 'Use GET /repos/{owner}/{repo}/issues.' }]);
    const offered = (openai.requests[0]?.tools ?? []) as Array<{
      function: { name: string; description: string };
    }>;
    expect(offered[0]?.function.name).toBe('GitHub_OpenAPI_Specification');
    expect(offered[0]?.function.description).toContain(
      'Use this tool to get information about the GitHub API',
    );
    // The tool's own model read the nearest documents from Pinecone (topK 4 in the default namespace).
    const query = pinecone.requests.find((r) => r.url.endsWith('/query'))?.body;
    expect(query).toMatchObject({ topK: 4, includeMetadata: true });
    expect((query as { namespace?: string }).namespace).toBeUndefined();
    const toolModel = (openai.requests[1]?.messages ?? []) as Array<{ role: string; content: string }>;
    expect(toolModel[0]?.content).toContain('List issues in a repository, open ones only.');
    expect(toolModel[1]).toEqual({ role: 'user', content: 'List issues in a repository' });
    expect(toolResult(2)).toMatchObject({
      role: 'tool',
      content: 'GET /repos/{owner}/{repo}/issues lists them.',
    });
  });
});
