/**
 * Issue 15: the agent API's cost over what it calls, and what an open WebSocket costs. One platform child
 * (SQLite, fresh data directory) with the fake OpenAI-compatible upstream as its only model, and an agent
 * on it with no tools and no topics (a turn is: store the user message, read the history, one model call
 * through the gateway, store the answer with its steps).
 * 1. WebSocket, first (so the child's heap has not been grown by the HTTP load, which would hide what
 *    the sockets take): WS_CONNECTIONS sockets opened to `/api/agents/ws` with the key in the
 *    Authorization header, held open, each answering a ping with a pong; the child's resident memory
 *    before and after → MB per connection, and the time to open them all. Then they are closed.
 * 2. `POST /api/agents/{id}/messages` (non-streaming) against the gateway (`POST /v1/chat/completions`)
 *    with the same prompt as the agent sends, in the same rounds: without a conversationId (each request
 *    opens a conversation), and with one conversation per autocannon connection, created and filled up
 *    front to the platform's history cap (AGENT_HISTORY_MESSAGES, 20 messages: the prompt is the same
 *    size on every request) against a gateway call carrying those 20 messages too. Round with the
 *    median ratio reported, as flows.js.
 * 3. Issue 34: n8n's AI Agent node in an active workflow (n8n webhook → AI Agent, its OpenAI Chat Model
 *    credential naming this platform's /v1 and the key, a Calculator tool offered) against the agent API's
 *    fresh message (2.), the same question and system message.
 * Run alone: `npm run build && BENCH_ONLY=agents node bench/run.js` (run.js reads BENCH_ONLY, not argv).
 * The child's per-IP and per-endpoint windows are off (RATE_LIMIT_PER_IP=0, RATE_LIMIT_PER_ENDPOINT=0)
 * and its daily quota is raised, as every bench child: all connections come from 127.0.0.1 on one key.
 * So is its bound on one key's open streams (STREAMS_PER_KEY, 100 by default): the sockets are all the
 * bench key's, and the 101st upgrade was a 429. The bench's agent-with-tools turn is agents-tools.js.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import WebSocket from 'ws';
import { generateKey } from '../../dist/modules/auth/key-format.js';
import { PLATFORM_NODE_FLAGS, platformEnv, rssMb, start, stop, waitHealthy } from '../children.js';
import { client, fmt, median, signed, sleep } from '../kit.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const bench = path.join(here, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = 32;
const MODEL = 'bench-model';
const ANSWER = 'Hello from the bench model.';
const QUESTION = 'What does the bench model say?';
const INSTRUCTIONS = 'You answer questions about the bench. Be brief.';
/** The platform's default AGENT_HISTORY_MESSAGES, set explicitly so the gateway's prompt matches it. */
const HISTORY = 20;
const WS_CONNECTIONS = Number(process.env.BENCH_WS_CONNECTIONS ?? 1_000);
/**
 * Upgrades under way at once: the default 1,000 all together (a burst, as after a deploy); a larger
 * BENCH_WS_CONNECTIONS opens in waves of this many, so its time is not that of SYN retries past the
 * listen backlog.
 */
const WS_OPENING = 1_000;
/** Time for the child to settle (timers, lazily freed buffers) before its memory is read. */
const SETTLE_MS = 1_000;

// No scenario in the shared table (run.js reads `default` as a list of them): only the report below.
export default [];

/**
 * One autocannon run of POSTs: one body for all, or `perConnection(n)` a fixed body for connection n.
 * Any failed request fails the bench: a figure of errors measures nothing.
 */
async function load(label, url, { path: urlPath, headers, body, perConnection }, duration = SECONDS) {
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
        body: perConnection ? perConnection(0) : body,
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

/** Opens one socket with the key in the Authorization header; resolves once open, rejects on anything else. */
function openSocket(wsUrl, key) {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${key}` } });
    socket.once('open', () => {
      socket.removeAllListeners('error');
      // A socket the server closes while held shows in the pong check, not as an unhandled error.
      socket.on('error', () => {});
      resolve(socket);
    });
    // The refusal's body says which bound it was (the key's streams, the process's, a rate limit).
    socket.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (part) => {
        body += part;
      });
      res.on('end', () => reject(new Error(`upgrade answered ${res.statusCode}: ${body.slice(0, 300)}`)));
      res.on('error', () => reject(new Error(`upgrade answered ${res.statusCode}`)));
    });
    socket.once('error', reject);
  });
}

/** Sends `{type: 'ping'}` and waits for the `pong` event (any other frame first is a failure). */
function pingPong(socket) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no pong within 10 s')), 10_000);
    socket.once('message', (data) => {
      clearTimeout(timer);
      const event = JSON.parse(data.toString('utf8'));
      if (event.type === 'pong' && typeof event.seq === 'number') resolve(event);
      else reject(new Error(`answered a ping with ${JSON.stringify(event).slice(0, 200)}`));
    });
    socket.send(JSON.stringify({ type: 'ping' }));
  });
}

/** `count` sockets opened WS_OPENING at a time; the time to open them all. */
async function openMany(wsUrl, key, count) {
  const sockets = [];
  let next = 0;
  const started = performance.now();
  const opener = async () => {
    while (next < count) {
      next++;
      sockets.push(await openSocket(wsUrl, key));
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(WS_OPENING, count) }, opener));
  } catch (error) {
    for (const socket of sockets) socket.terminate();
    throw error;
  }
  return { sockets, seconds: (performance.now() - started) / 1000 };
}

/** Closes every socket and waits for the server's close frames (so the child has let them go). */
async function closeAll(sockets) {
  await Promise.all(
    sockets.map(
      (socket) =>
        new Promise((resolve) => {
          if (socket.readyState === WebSocket.CLOSED) return resolve();
          socket.once('close', resolve);
          socket.close(1000, 'bench done');
        }),
    ),
  );
}

/** WS_CONNECTIONS held sockets: the child's memory before and after, and the time to open them. */
async function sockets(url, key, pid) {
  const wsUrl = `${url.replace('http', 'ws')}/api/agents/ws`;
  // One socket first, so the first upgrade's one-off costs (code paths compiled) are not counted per socket.
  const warm = await openMany(wsUrl, key, 10);
  await Promise.all(warm.sockets.map(pingPong));
  await closeAll(warm.sockets);
  await sleep(SETTLE_MS);
  const before = rssMb(pid);
  const { sockets: open, seconds } = await openMany(wsUrl, key, WS_CONNECTIONS);
  try {
    const pongs = await Promise.all(open.map(pingPong));
    const stillOpen = open.filter((s) => s.readyState === WebSocket.OPEN).length;
    if (pongs.length !== WS_CONNECTIONS || stillOpen !== WS_CONNECTIONS)
      throw new Error(`${pongs.length} pongs, ${stillOpen} of ${WS_CONNECTIONS} sockets open`);
    await sleep(SETTLE_MS);
    const after = rssMb(pid);
    return { before, after, seconds };
  } finally {
    await closeAll(open);
  }
}

/** The agent, its conversations and the requests measured, each checked once by hand before any load. */
async function prepare(call, auth, url) {
  const agent = await call(
    'POST',
    '/api/agents',
    { name: 'bench agent', instructions: INSTRUCTIONS, model: MODEL },
    [201],
  );
  const messagesPath = `/api/agents/${agent.id}/messages`;
  const first = await call('POST', messagesPath, { content: QUESTION }, [200]);
  if (first.messages?.[1]?.content !== ANSWER || typeof first.conversationId !== 'string')
    throw new Error(`agent answered ${JSON.stringify(first).slice(0, 300)}`);

  // One conversation per autocannon connection, filled to the history cap before any load, so every
  // measured turn sends the model the same HISTORY messages and the new one.
  const conversations = await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      const conversation = await call('POST', '/api/conversations', { agentId: agent.id }, [201]);
      for (let turn = 0; turn < HISTORY / 2; turn++)
        await call('POST', messagesPath, { conversationId: conversation.id, content: QUESTION }, [200]);
      return conversation.id;
    }),
  );

  // The gateway gets what the agent sends the model: its instructions, then (with a conversation) the
  // last HISTORY messages, then the question.
  const system = { role: 'system', content: INSTRUCTIONS };
  const user = { role: 'user', content: QUESTION };
  const history = Array.from({ length: HISTORY / 2 }, () => [
    user,
    { role: 'assistant', content: ANSWER },
  ]).flat();
  const gatewayBody = (messages) => JSON.stringify({ model: MODEL, messages });
  const direct = await call('POST', '/v1/chat/completions', JSON.parse(gatewayBody([system, user])), [200]);
  if (direct.choices?.[0]?.message?.content !== ANSWER)
    throw new Error(`gateway answered ${JSON.stringify(direct).slice(0, 300)}`);

  // n8n's AI Agent on the same model through the gateway (an openAiApi credential naming this
  // platform's /v1 and the key), with one tool (Calculator) offered, started by an n8n webhook.
  const credential = await call(
    'POST',
    '/api/v1/credentials',
    { name: 'gateway', type: 'openAiApi', data: { apiKey: auth.authorization.slice(7), url: `${url}/v1` } },
    [201],
  );
  const lc = '@n8n/n8n-nodes-langchain';
  const workflow = await call(
    'POST',
    '/api/v1/workflows',
    {
      name: 'bench n8n agent',
      nodes: [
        {
          name: 'Webhook',
          type: 'n8n-nodes-base.webhook',
          typeVersion: 2,
          position: [0, 0],
          parameters: { httpMethod: 'POST', path: 'bench-n8n-agent', responseMode: 'lastNode', options: {} },
        },
        {
          name: 'AI Agent',
          type: `${lc}.agent`,
          typeVersion: 2,
          position: [200, 0],
          parameters: { promptType: 'define', text: QUESTION, options: { systemMessage: INSTRUCTIONS } },
        },
        {
          name: 'Model',
          type: `${lc}.lmChatOpenAi`,
          typeVersion: 1.2,
          position: [200, 200],
          parameters: { model: { __rl: true, mode: 'id', value: MODEL }, options: {} },
          credentials: { openAiApi: { id: credential.id, name: 'gateway' } },
        },
        {
          name: 'Calculator',
          type: `${lc}.toolCalculator`,
          typeVersion: 1,
          position: [400, 200],
          parameters: {},
        },
      ],
      connections: {
        Webhook: { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] },
        Model: { ai_languageModel: [[{ node: 'AI Agent', type: 'ai_languageModel', index: 0 }]] },
        Calculator: { ai_tool: [[{ node: 'AI Agent', type: 'ai_tool', index: 0 }]] },
      },
      settings: {},
    },
    [201],
  );
  await call('POST', `/api/v1/workflows/${workflow.id}/activate`, {}, [200]);
  const n8nAnswer = await call('POST', '/webhook/bench-n8n-agent', {}, [200]);
  if (n8nAnswer.output !== ANSWER)
    throw new Error(`n8n agent answered ${JSON.stringify(n8nAnswer).slice(0, 300)}`);

  return {
    agent,
    conversations,
    requests: {
      n8nAgent: { path: '/webhook/bench-n8n-agent', headers: auth, body: '{}' },
      gateway: { path: '/v1/chat/completions', headers: auth, body: gatewayBody([system, user]) },
      gatewayHistory: {
        path: '/v1/chat/completions',
        headers: auth,
        body: gatewayBody([system, ...history, user]),
      },
      fresh: { path: messagesPath, headers: auth, body: JSON.stringify({ content: QUESTION }) },
      conversation: {
        path: messagesPath,
        headers: auth,
        perConnection: (n) => JSON.stringify({ conversationId: conversations[n], content: QUESTION }),
      },
    },
  };
}

/** Each figure and its reference: the agent's turn against the gateway call with the same prompt. */
const FIGURES = [
  ['fresh', 'gateway'],
  ['conversation', 'gatewayHistory'],
  ['n8nAgent', 'fresh'],
];
const RUNS = ['gateway', 'fresh', 'gatewayHistory', 'conversation', 'n8nAgent'];

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
  const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-bench-agents-'));
  let fake;
  let platform;
  try {
    fake = await start(path.join(bench, 'fake-llm-upstream.js'), {});
    const key = generateKey('production');
    platform = await start(
      path.join(bench, 'platform-server.js'),
      platformEnv(dataDir, key, {
        AGENT_HISTORY_MESSAGES: String(HISTORY),
        // Every socket is on the bench's one key: the per-key bound on open streams (100 by default,
        // a 429 on the 101st upgrade) is raised past them, as the rate limits are.
        STREAMS_PER_KEY: String(WS_CONNECTIONS + 100),
        // The n8n AI Agent's model credential names this very platform's /v1 on loopback.
        OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
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
      PLATFORM_NODE_FLAGS,
    );
    const url = `http://127.0.0.1:${platform.port}`;
    await waitHealthy(url);
    const auth = { authorization: `Bearer ${key}` };
    const call = client(url, key);

    const ws = await sockets(url, key, platform.child.pid);
    const { agent, conversations, requests } = await prepare(call, auth, url);
    const result = await measure(url, requests);

    // The conversation runs really were turns of one conversation: its messages are all there.
    const page = await call(
      'GET',
      `/api/agents/${agent.id}/messages?conversationId=${conversations[0]}&limit=100`,
      undefined,
      [200],
    );
    if (page.data.length < HISTORY + 2)
      throw new Error(`conversation ${conversations[0]} holds ${page.data.length} messages`);

    const rss = rssMb(platform.child.pid);
    const added = ws.after - ws.before;
    const line = (label, r, reference) =>
      `${label}: ${fmt(r.f.rps)} msg/s, p99 ${fmt(r.f.p99)} ms vs ${reference} ${fmt(r.g.rps)} req/s, ` +
      `p99 ${fmt(r.g.p99)} ms → ratio ${fmt(r.ratio, 2)}, added p99 ${signed(r.addedP99)} ms`;
    return [
      line(
        'agent message, no tools/topics, no conversationId (one opened per request; non-stream)',
        result.fresh,
        'gateway, same prompt',
      ),
      line(
        `agent message, fixed conversationId per connection (history at its cap, ${HISTORY} messages)`,
        result.conversation,
        `gateway, same ${HISTORY + 2}-message prompt`,
      ),
      line(
        'n8n AI Agent workflow (webhook → AI Agent on the gateway, Calculator tool offered; issue 34)',
        result.n8nAgent,
        'the agent API, same prompt, no conversationId',
      ),
      `agent WebSocket: ${fmt(WS_CONNECTIONS)} connections (Authorization header) opened in ${fmt(ws.seconds, 2)} s ` +
        `(${WS_OPENING} upgrades at a time), each answered a ping with a pong; child RSS ` +
        `${fmt(ws.before, 1)} → ${fmt(ws.after, 1)} MB: +${fmt(added, 1)} MB, ` +
        `${fmt((added * 1024) / WS_CONNECTIONS, 1)} KB per connection`,
      `agents: median-ratio round of ${ROUNDS}, ${SECONDS}s per run, ${CONNECTIONS} connections, one platform ` +
        `child (SQLite) over the fake upstream, RATE_LIMIT_PER_IP=0 and RATE_LIMIT_PER_ENDPOINT=0; ` +
        `child RSS after ${fmt(rss, 0)} MB`,
    ];
  } finally {
    await Promise.all([stop(platform?.child), stop(fake?.child)]);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
