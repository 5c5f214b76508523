import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { PG_URL, testDialects, uniqueName } from '../helpers/services.js';
import type { Execution } from './db-support.js';
import { type AiNodeSpec, aiWorkflow, LC } from './support/ai-workflow.js';
import { FakeEmbeddings } from './support/fake-embeddings.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { createCredential, createWorkflow, workflowPlatform } from './support.js';

/**
 * n8n's Postgres PGVector Store on a real PostgreSQL with the real pgvector extension: PGlite (PostgreSQL
 * in WASM) with pgvector, served over the PostgreSQL wire protocol on a local port, reached by the node's
 * own `pg` connection through the outbound guard. Embeddings come from a local OpenAI-wire upstream.
 */

const openai = new FakeOpenAi();
const embed = new FakeEmbeddings();
let db: PGlite;
let server: PGLiteSocketServer;
let pgHost = '';
let pgPort = '';

beforeAll(async () => {
  await Promise.all([openai.start(), embed.start()]);
  db = await PGlite.create({ extensions: { vector } });
  server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 20 });
  await server.start();
  [pgHost = '', pgPort = ''] = server.getServerConn().split(':');
}, 300_000);
afterAll(async () => {
  await Promise.all([openai.stop(), embed.stop()]);
  await server?.stop();
  await db?.close();
});
beforeEach(() => {
  openai.reset();
  embed.reset();
});

const CITIES = [
  { city: 'Berlin', text: 'Berlin is the capital of Germany on the river Spree.' },
  { city: 'Prague', text: 'Prague is the capital of the Czech Republic on the Vltava river.' },
  { city: 'Kyiv', text: 'Kyiv is the capital of Ukraine on the Dnieper river.' },
];

const [dialect = 'sqlite'] = await testDialects();

describe(`PGVector store on PGlite + pgvector, platform on ${dialect}`, () => {
  let p: TestPlatform;
  const creds = { pg: '', embed: '', openai: '', plainPg: '' };

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    creds.pg = await createCredential(p, 'pgvector', 'postgres', {
      host: pgHost,
      port: pgPort,
      database: 'postgres',
      user: 'postgres',
      password: 'unused',
    });
    creds.embed = await createCredential(p, 'embed', 'openAiApi', { apiKey: 'ek', url: `${embed.base}/v1` });
    creds.openai = await createCredential(p, 'openai', 'openAiApi', {
      apiKey: 'sk',
      url: `${openai.base}/v1`,
    });
    const plain = new URL(PG_URL);
    creds.plainPg = await createCredential(p, 'plain pg', 'postgres', {
      host: plain.hostname,
      port: plain.port || '5432',
      database: plain.pathname.slice(1),
      user: decodeURIComponent(plain.username),
      password: decodeURIComponent(plain.password),
    });
  }, 120_000);
  afterAll(() => p.close());

  const embeddings = (): AiNodeSpec => ({
    name: 'Embeddings',
    type: `${LC}.embeddingsOpenAi`,
    typeVersion: 1.2,
    parameters: { model: 'text-embedding-3-small', options: {} },
    credentials: { openAiApi: { id: creds.embed, name: 'embed' } },
  });
  const store = (parameters: Record<string, unknown>, cred = creds.pg): AiNodeSpec => ({
    name: 'Store',
    type: `${LC}.vectorStorePGVector`,
    typeVersion: 1.1,
    parameters,
    credentials: { postgres: { id: cred, name: 'pg' } },
  });

  async function run(
    nodes: AiNodeSpec[],
    edges: Array<[string, string, string?]>,
    startNode: string,
    items: Array<{ json: Record<string, unknown> }> = [{ json: {} }],
  ): Promise<Execution> {
    const wf = aiWorkflow(nodes, edges);
    const id = await createWorkflow(p, {
      name: wf.name,
      nodes: wf.nodes,
      connections: wf.connections,
      settings: {},
    });
    const res = await p.request({
      method: 'POST',
      url: `/api/v1/workflows/${id}/run`,
      payload: { startNode, items },
    });
    expect(res.statusCode).toBe(200);
    return res.json() as Execution;
  }
  const outputOf = (e: Execution, node: string) =>
    (e.data.resultData.runData[node]?.[0]?.data?.main[0] ?? []).map((i) => i.json);

  async function insert(parameters: Record<string, unknown>, cred = creds.pg) {
    return run(
      [
        store({ mode: 'insert', ...parameters }, cred),
        {
          name: 'Loader',
          type: `${LC}.documentDefaultDataLoader`,
          typeVersion: 1.1,
          parameters: {
            jsonMode: 'expressionData',
            jsonData: '={{ $json.text }}',
            options: { metadata: { metadataValues: [{ name: 'city', value: '={{ $json.city }}' }] } },
          },
        },
        embeddings(),
      ],
      [
        ['Trigger', 'Store'],
        ['Loader', 'Store', 'ai_document'],
        ['Embeddings', 'Store', 'ai_embedding'],
      ],
      'Store',
      CITIES.map((c) => ({ json: c })),
    );
  }
  const load = (parameters: Record<string, unknown>, cred = creds.pg) =>
    run(
      [store({ mode: 'load', ...parameters }, cred), embeddings()],
      [['Embeddings', 'Store', 'ai_embedding']],
      'Store',
    );

  it('inserts documents into its table (created with pgvector) and loads the nearest, by distance', async () => {
    const table = uniqueName('vec');
    const e = await insert({ tableName: table });
    expect(e.data.resultData.error ?? null).toBeNull();
    expect(outputOf(e, 'Store')).toHaveLength(3);
    const rows = await db.query<{ text: string; metadata: { city: string }; dims: number }>(
      `SELECT text, metadata, vector_dims(embedding) AS dims FROM "${table}" ORDER BY text`,
    );
    expect(rows.rows.map((r) => r.metadata.city)).toEqual(['Berlin', 'Kyiv', 'Prague']);
    expect(rows.rows[0]?.dims).toBe(256);

    const found = await load({ tableName: table, prompt: 'Dnieper Ukraine', topK: 2 });
    expect(found.data.resultData.error ?? null).toBeNull();
    const docs = outputOf(found, 'Store') as Array<{
      document: { pageContent: string; metadata: Record<string, unknown> };
      score: number;
    }>;
    expect(docs).toHaveLength(2);
    expect(docs[0]?.document.metadata.city).toBe('Kyiv');
    expect(docs[0]?.document.pageContent).toBe(CITIES[2]?.text);
    // pgvector's cosine distance, as LangChain answers it: the nearest first, smaller is nearer.
    expect(docs[0]?.score).toBeLessThan(docs[1]?.score ?? 0);
    expect(docs[0]?.score).toBeGreaterThanOrEqual(0);
  });

  it("n8n's column names, collections, distance strategies and metadata filter", async () => {
    const table = uniqueName('cols');
    const columnNames = {
      values: {
        idColumnName: 'doc_id',
        vectorColumnName: 'vec',
        contentColumnName: 'body',
        metadataColumnName: 'meta',
      },
    };
    const collection = (name: string) => ({
      values: { useCollection: true, collectionName: name, collectionTableName: `${table}_coll` },
    });
    expect(
      (await insert({ tableName: table, options: { columnNames, collection: collection('a') } })).data
        .resultData.error ?? null,
    ).toBeNull();
    expect(
      (await insert({ tableName: table, options: { columnNames, collection: collection('b') } })).data
        .resultData.error ?? null,
    ).toBeNull();
    const columns = await db.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY column_name`,
      [table],
    );
    expect(columns.rows.map((r) => r.column_name)).toEqual([
      'body',
      'collection_id',
      'doc_id',
      'meta',
      'vec',
    ]);
    expect((await db.query(`SELECT name FROM "${table}_coll" ORDER BY name`)).rows).toEqual([
      { name: 'a' },
      { name: 'b' },
    ]);

    for (const distanceStrategy of ['cosine', 'innerProduct', 'euclidean']) {
      const e = await load({
        tableName: table,
        prompt: 'Vltava Czech',
        topK: 10,
        options: { columnNames, collection: collection('a'), distanceStrategy },
      });
      expect(e.data.resultData.error ?? null, distanceStrategy).toBeNull();
      const docs = outputOf(e, 'Store') as Array<{ document: { metadata: { city: string } }; score: number }>;
      // Only collection a's three rows, the nearest first whatever the measure.
      expect(docs.map((d) => d.document.metadata.city)[0], distanceStrategy).toBe('Prague');
      expect(docs, distanceStrategy).toHaveLength(3);
    }
    const filtered = await load({
      tableName: table,
      prompt: 'capital',
      topK: 10,
      options: {
        columnNames,
        collection: collection('b'),
        metadata: { metadataValues: [{ name: 'city', value: 'Berlin' }] },
      },
    });
    const docs = outputOf(filtered, 'Store') as Array<{ document: { metadata: { city: string } } }>;
    expect(docs.map((d) => d.document.metadata.city)).toEqual(['Berlin']);
  });

  it('retrieve-as-tool: an AI Agent searches the store and reads what it found', async () => {
    const table = uniqueName('tool');
    expect((await insert({ tableName: table })).data.resultData.error ?? null).toBeNull();
    openai.queue(
      toolCalls([{ id: 'c1', name: 'cities', arguments: '{"input":"Spree Germany"}' }]),
      completion('Berlin.'),
    );
    const e = await run(
      [
        {
          name: 'AI Agent',
          type: `${LC}.agent`,
          typeVersion: 2,
          parameters: { promptType: 'define', text: 'Which city?' },
        },
        {
          name: 'Model',
          type: `${LC}.lmChatOpenAi`,
          typeVersion: 1.2,
          parameters: { model: { __rl: true, mode: 'list', value: 'gpt-4o-mini' }, options: {} },
          credentials: { openAiApi: { id: creds.openai, name: 'openai' } },
        },
        {
          ...store({
            mode: 'retrieve-as-tool',
            tableName: table,
            toolName: 'cities',
            toolDescription: 'City facts',
            topK: 1,
          }),
        },
        embeddings(),
      ],
      [
        ['Trigger', 'AI Agent'],
        ['Model', 'AI Agent', 'ai_languageModel'],
        ['Store', 'AI Agent', 'ai_tool'],
        ['Embeddings', 'Store', 'ai_embedding'],
      ],
      'AI Agent',
    );
    expect(e.data.resultData.error ?? null).toBeNull();
    expect(outputOf(e, 'AI Agent')).toEqual([{ output: 'Berlin.' }]);
    const tool = ((openai.requests[1]?.messages ?? []) as Array<{ role: string; content: string }>).at(-1);
    expect(tool?.role).toBe('tool');
    expect(JSON.parse(tool?.content ?? '[]')).toEqual([
      { pageContent: CITIES[0]?.text, metadata: expect.objectContaining({ city: 'Berlin' }) },
    ]);
  });

  it('a role that may not create, on a prepared database: inserts, and loads in a read-only transaction', async () => {
    const table = uniqueName('prep');
    const coll = `${table}_coll`;
    const collection = { values: { useCollection: true, collectionName: 'c', collectionTableName: coll } };
    expect(
      (await insert({ tableName: table, options: { collection } })).data.resultData.error ?? null,
    ).toBeNull();
    const role = uniqueName('app');
    // No CREATE on the database or schema (PostgreSQL's defaults since 15, said here outright).
    await db.exec(
      `CREATE ROLE "${role}" NOLOGIN; REVOKE CREATE ON SCHEMA public FROM PUBLIC; GRANT USAGE ON SCHEMA public TO "${role}"; GRANT SELECT, INSERT ON "${table}", "${coll}" TO "${role}"`,
    );
    // PGlite is one session: every connection of the node's pool runs as this role from here.
    await db.exec(`SET ROLE "${role}"`);
    try {
      const added = await insert({ tableName: table, options: { collection } });
      expect(added.data.resultData.error ?? null).toBeNull();
      await db.exec('SET default_transaction_read_only = on');
      const found = await load({ tableName: table, prompt: 'Spree', topK: 10, options: { collection } });
      expect(found.data.resultData.error ?? null).toBeNull();
      expect(outputOf(found, 'Store')).toHaveLength(6);
      // A collection that does not exist yet is nothing found, not a write.
      const other = { values: { ...collection.values, collectionName: 'none yet' } };
      const none = await load({ tableName: table, prompt: 'Spree', options: { collection: other } });
      expect(none.data.resultData.error ?? null).toBeNull();
      expect(outputOf(none, 'Store')).toEqual([]);
    } finally {
      await db.exec('RESET default_transaction_read_only; RESET ROLE');
    }
  });

  it('a PostgreSQL without pgvector: a node error naming the missing extension', async () => {
    const e = await load({ tableName: uniqueName('nopg'), prompt: 'x' }, creds.plainPg);
    const error = e.data.resultData.error as { message?: string; description?: string } | undefined;
    expect(error?.message).toBe('The pgvector extension is not available on this PostgreSQL server');
    expect(error?.description).toMatch(/CREATE EXTENSION vector failed: .*vector/);
  });

  it('refuses a table name it cannot quote, before any SQL', async () => {
    const e = await load({ tableName: 'bad"name', prompt: 'x' });
    expect((e.data.resultData.error as { message?: string })?.message).toMatch(/not a usable SQL name/);
    expect(embed.requests).toHaveLength(0);
  });

  it('the outbound guard: a platform that does not allow loopback refuses the connection', async () => {
    const guarded = await workflowPlatform(dialect, { OUTBOUND_ALLOW_HOSTS: '' });
    try {
      const cred = await createCredential(guarded, 'pg', 'postgres', {
        host: pgHost,
        port: pgPort,
        database: 'postgres',
        user: 'postgres',
      });
      const wf = aiWorkflow([store({ mode: 'load', tableName: 'n8n_vectors', prompt: 'x' }, cred)], []);
      const id = await createWorkflow(guarded, {
        name: wf.name,
        nodes: wf.nodes,
        connections: wf.connections,
        settings: {},
      });
      const res = await guarded.request({
        method: 'POST',
        url: `/api/v1/workflows/${id}/run`,
        payload: { startNode: 'Store', items: [{ json: {} }] },
      });
      const error = (res.json() as Execution).data.resultData.error as { message?: string } | undefined;
      expect(error?.message).toMatch(/not allowed|private|loopback|refused|blocked/i);
    } finally {
      await guarded.close();
    }
  }, 60_000);
});
