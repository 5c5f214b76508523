/**
 * Issue 14: the flows API's cost over what it calls. One platform child (SQLite, fresh data directory)
 * with the fake OpenAI-compatible upstream as its only model; each round measures, back to back, the
 * gateway called directly (`POST /v1/chat/completions`), an llm flow without memory, the same flow with a
 * window memory (a fixed sessionId per connection: a memory read and two message rows per prediction),
 * the knowledge query alone and a rag flow over a ~10k-chunk topic with the same varied questions.
 * The llm flows are compared with the gateway, the rag flow with its retrieval, in the same round (so
 * noise hits both alike); the round with the median ratio is reported. Issue 36: a Flowise Conversational
 * Retrieval QA chatflow (flowData: ChatOpenAI and a Postgres vector store naming the same topic, Flowise's
 * default buffer memory) against the platform's own rag flow on the same data and questions.
 * Run alone: `npm run build && BENCH_ONLY=flows node bench/run.js` (run.js reads BENCH_ONLY, not argv).
 * BENCH_FLOWS_CPU_PROF=<dir> makes the child write a CPU profile there.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { generateKey } from '../../dist/modules/auth/key-format.js';
import { PLATFORM_NODE_FLAGS, platformEnv, rssMb, start, stop, waitHealthy } from '../children.js';
import { client, fmt, ingestCorpus, median, signed } from '../kit.js';
import { queryMaker, vocabulary } from '../knowledge-corpus.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const bench = path.join(here, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = 32;
const MODEL = 'bench-model';
const ANSWER = 'Hello from the bench model.';
const QUESTION = 'What does the bench model say?';
const WINDOW = 5;
/** The rag topic's size: documents of ~100 chunks each until this many (knowledge.js's first stop). */
const RAG_CHUNKS = 10_000;
const CHUNK_SIZE = 500;
const CHUNK_OVERLAP = 50;
const EMBEDDING_MODEL = 'builtin/hashed-ngrams';
const DOC_CHARS = 33_000;
const IN_FLIGHT = 4;
const TOPIC = 'bench-flows';
/** Distinct rag questions the load turns through (vocabulary words, as knowledge.js queries). */
const RAG_QUESTIONS = 500;
const CPU_PROF_DIR = process.env.BENCH_FLOWS_CPU_PROF ?? '';

// No scenario in the shared table (run.js reads `default` as a list of them): only the report below.
export default [];

/**
 * One autocannon run of POSTs: `bodies` turned through request by request, or `perConnection(n)` a fixed
 * body for connection n. Any failed request fails the bench: a figure of errors measures nothing.
 */
async function load(label, url, { path: urlPath, headers, bodies, perConnection }, duration = SECONDS) {
  let turn = 0;
  let connection = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration,
    // autocannon clones the options per connection, so a body set here stays that connection's.
    ...(perConnection ? { setupClient: (c) => c.setBody(perConnection(connection++)) } : {}),
    requests: [
      {
        method: 'POST',
        path: urlPath,
        headers: { 'content-type': 'application/json', ...headers },
        body: perConnection ? perConnection(0) : bodies[0],
        ...(bodies && bodies.length > 1
          ? { setupRequest: (req) => ({ ...req, body: bodies[turn++ % bodies.length] }) }
          : {}),
      },
    ],
  });
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) {
    throw new Error(
      `${label}: ${bad} of ${result.requests.total} requests failed ` +
        `(non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts})`,
    );
  }
  return { rps: result.requests.average, p99: result.latency.p99, total: result.requests.total };
}

/** Flowise's Conversational Retrieval QA canvas over the bench topic (a Postgres store names it). */
function crqaCanvas() {
  const node = (id, name, inputs) => ({ id, type: 'customNode', data: { id, name, inputs } });
  return JSON.stringify({
    nodes: [
      node('chatOpenAI_0', 'chatOpenAI', { modelName: MODEL, temperature: 0.9 }),
      node('openAIEmbeddings_0', 'openAIEmbeddings', { modelName: 'text-embedding-ada-002' }),
      node('postgres_0', 'postgres', {
        tableName: TOPIC,
        embeddings: '{{openAIEmbeddings_0.data.instance}}',
        topK: 4,
      }),
      node('conversationalRetrievalQAChain_0', 'conversationalRetrievalQAChain', {
        model: '{{chatOpenAI_0.data.instance}}',
        vectorStoreRetriever: '{{postgres_0.data.instance}}',
        memory: '',
      }),
    ],
    edges: [
      { source: 'openAIEmbeddings_0', target: 'postgres_0', sourceHandle: '', targetHandle: '' },
      {
        source: 'chatOpenAI_0',
        target: 'conversationalRetrievalQAChain_0',
        sourceHandle: '',
        targetHandle: '',
      },
      {
        source: 'postgres_0',
        target: 'conversationalRetrievalQAChain_0',
        sourceHandle: '',
        targetHandle: '',
      },
    ],
  });
}

/** The flows and the requests measured on them, each checked once by hand before any load. */
async function prepare(call, auth) {
  const words = vocabulary();
  const state = { next: 0, chunks: 0, base: 0 };
  const { seconds } = await ingestCorpus(call, words, state, RAG_CHUNKS, {
    topic: TOPIC,
    docChars: DOC_CHARS,
    chunkSize: CHUNK_SIZE,
    chunkOverlap: CHUNK_OVERLAP,
    model: EMBEDDING_MODEL,
    inFlight: IN_FLIGHT,
  });
  const corpus = { chunks: state.chunks, docs: state.next, seconds };

  const plain = await call(
    'POST',
    '/api/v1/chatflows',
    { name: 'bench llm', kind: 'llm', model: MODEL },
    [201],
  );
  const windowed = await call(
    'POST',
    '/api/v1/chatflows',
    { name: 'bench llm window', kind: 'llm', model: MODEL, memory: { type: 'window', windowSize: WINDOW } },
    [201],
  );
  const rag = await call(
    'POST',
    '/api/v1/chatflows',
    { name: 'bench rag', kind: 'rag', model: MODEL, topics: [TOPIC] },
    [201],
  );

  const gatewayBody = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: QUESTION }] });
  const direct = await call('POST', '/v1/chat/completions', JSON.parse(gatewayBody), [200]);
  if (direct.choices?.[0]?.message?.content !== ANSWER)
    throw new Error(`gateway answered ${JSON.stringify(direct).slice(0, 300)}`);
  const first = await call('POST', `/api/v1/prediction/${plain.id}`, { question: QUESTION }, [200]);
  if (first.text !== ANSWER || first.memoryType !== 'none')
    throw new Error(`llm flow answered ${JSON.stringify(first).slice(0, 300)}`);

  const nextQuestion = queryMaker(words, 303);
  const ragBodies = Array.from({ length: RAG_QUESTIONS }, () => JSON.stringify({ question: nextQuestion() }));
  const ragAnswer = await call('POST', `/api/v1/prediction/${rag.id}`, JSON.parse(ragBodies[0]), [200]);
  const flowise = await call(
    'POST',
    '/api/v1/chatflows',
    { name: 'bench flowise crqa', flowData: crqaCanvas() },
    [201],
  );
  const crqaAnswer = await call('POST', `/api/v1/prediction/${flowise.id}`, JSON.parse(ragBodies[0]), [200]);
  if (crqaAnswer.text !== ANSWER || crqaAnswer.sourceDocuments.length === 0)
    throw new Error(`flowise chatflow answered ${JSON.stringify(crqaAnswer).slice(0, 300)}`);
  // A rag prediction that retrieves nothing would measure an llm flow with an empty context.
  if (ragAnswer.text !== ANSWER || ragAnswer.sourceDocuments.length === 0)
    throw new Error(`rag flow answered ${JSON.stringify(ragAnswer).slice(0, 300)}`);

  const predictionPath = (flow) => `/api/v1/prediction/${flow.id}`;
  return {
    corpus,
    windowed,
    requests: {
      gateway: { path: '/v1/chat/completions', headers: auth, bodies: [gatewayBody] },
      plain: { path: predictionPath(plain), headers: auth, bodies: [JSON.stringify({ question: QUESTION })] },
      windowed: {
        path: predictionPath(windowed),
        headers: auth,
        perConnection: (n) => JSON.stringify({ question: QUESTION, sessionId: `bench-session-${n}` }),
      },
      rag: { path: predictionPath(rag), headers: auth, bodies: ragBodies },
      flowise: { path: predictionPath(flowise), headers: auth, bodies: ragBodies },
      // The rag flow's retrieval alone, same questions and settings: what the flow adds to it.
      query: {
        path: '/api/knowledge/query',
        headers: auth,
        bodies: ragBodies.map((b) =>
          JSON.stringify({ query: JSON.parse(b).question, topK: 4, topics: [TOPIC], mode: 'hybrid' }),
        ),
      },
    },
  };
}

/** Each figure and what it is compared with: the llm flows with the gateway, the rag flow with its retrieval. */
const FIGURES = [
  ['plain', 'gateway'],
  ['windowed', 'gateway'],
  ['rag', 'query'],
  ['flowise', 'rag'],
];
const RUNS = ['gateway', 'plain', 'windowed', 'query', 'rag', 'flowise'];

/** ROUNDS rounds of every run back to back; per figure, the round with its median ratio to its reference. */
async function measure(url, requests) {
  for (const name of RUNS) await load(`${name} warm-up`, url, requests[name], 2);
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const row = {};
    for (const name of RUNS) row[name] = await load(name, url, requests[name]);
    rounds.push(row);
  }
  const out = {};
  for (const [name, reference] of FIGURES) {
    const runs = rounds
      .map((r) => ({ g: r[reference], f: r[name], ratio: r[name].rps / r[reference].rps }))
      .sort((x, y) => x.ratio - y.ratio);
    out[name] = {
      ...runs[Math.floor(runs.length / 2)],
      addedP99: median(rounds.map((r) => r[name].p99 - r[reference].p99)),
    };
  }
  return out;
}

/** Starts the fake upstream and a platform routed to it, measures, and stops both whatever happens. */
export async function report() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-bench-flows-'));
  let fake;
  let platform;
  try {
    fake = await start(path.join(bench, 'fake-llm-upstream.js'), {});
    const key = generateKey('production');
    platform = await start(
      path.join(bench, 'platform-server.js'),
      platformEnv(dataDir, key, {
        OPENAI_API_KEY: 'bench',
        LLM_MODELS: JSON.stringify([
          {
            name: MODEL,
            provider: 'openai',
            baseUrl: `http://127.0.0.1:${fake.port}/v1`,
            upstreamModel: MODEL,
            timeoutMs: 10000,
          },
        ]),
      }),
      [...PLATFORM_NODE_FLAGS, ...(CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : [])],
    );
    const url = `http://127.0.0.1:${platform.port}`;
    await waitHealthy(url);
    const auth = { authorization: `Bearer ${key}` };
    const call = client(url, key);
    const { corpus, windowed, requests } = await prepare(call, auth);
    const result = await measure(url, requests);

    // The window memory really was read and written: a session's turns are there, two rows each.
    const session = await call(
      'GET',
      `/api/v1/chatmessage/${windowed.id}?sessionId=bench-session-0&limit=20`,
      undefined,
      [200],
    );
    // On a loaded machine one connection may make few requests: the figures stand, the count is shown.
    if (session.length < 2)
      throw new Error(`window memory: session bench-session-0 holds ${session.length} messages`);

    const rss = rssMb(platform.child.pid);
    const line = (label, r, reference) =>
      `${label}: ${fmt(r.f.rps)} req/s, p99 ${fmt(r.f.p99)} ms vs ${reference} ${fmt(r.g.rps)} req/s, ` +
      `p99 ${fmt(r.g.p99)} ms → ratio ${fmt(r.ratio, 2)}, added p99 ${signed(r.addedP99)} ms`;
    return [
      line('flow llm, memory none (non-stream)', result.plain, 'gateway'),
      line(`flow llm, memory window ${WINDOW} (fixed sessionId per connection)`, result.windowed, 'gateway'),
      line(
        `flow rag, ${fmt(corpus.chunks)} chunks, topK 4, varied questions`,
        result.rag,
        '/api/knowledge/query hybrid alone',
      ),
      line(
        `Flowise Conversational Retrieval QA chatflow (flowData), same topic and questions`,
        result.flowise,
        'the platform rag flow',
      ),
      `flows: median-ratio round of ${ROUNDS}, ${SECONDS}s per run, ${CONNECTIONS} connections, one platform ` +
        `child (SQLite) over the fake upstream; rag topic loaded through /api/documents in ` +
        `${fmt(corpus.seconds, 1)} s (${corpus.docs} documents, ${EMBEDDING_MODEL}); child RSS after ${fmt(rss, 0)} MB; ` +
        `window session 0 holds ${session.length} messages`,
    ];
  } finally {
    await Promise.all([stop(platform?.child), stop(fake?.child)]);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
