/**
 * Issues 12 and 32: the language-model gateway's overhead, measured against a fake OpenAI-compatible
 * upstream hit directly and through a bare node:http proxy in the same run (so noise hits all alike):
 * non-streaming and streaming throughput, time to the first streamed chunk, and the built-in
 * hashed-ngrams embedder in process and through /api/embed, and the CPU each server process spends per
 * call (the steadiest figure on a loaded machine). BENCH_LLM_PARTS=nonstream,stream,ttfb,cpu,embed picks
 * parts.
 * The gateway runs in its own platform child with the fake as its only configured upstream model.
 * BENCH_LLM_CPU_PROF=<dir> makes that child write a CPU profile there, to see where a slow run goes.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { generateKey } from '../../dist/modules/auth/key-format.js';
import { embedHashedNgrams } from '../../dist/modules/llm/builtin/hashed-ngrams.js';
import { PLATFORM_NODE_FLAGS, platformEnv, start, stop, waitHealthy } from '../children.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const bench = path.join(here, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = 32;
const TTFB_REQUESTS = 300;
const TTFB_WARMUP = 30;
const CPU_CALLS = Number(process.env.BENCH_LLM_CPU_CALLS ?? 3000);
const CPU_CONNECTIONS = 16;
/** Clock ticks per second of /proc's utime and stime (USER_HZ: 100 on Linux). */
const USER_HZ = 100;
const EMBED_BATCH = 16;
const EMBED_TEXTS = 50;
const EMBED_WORDS = 200;
/** A directory: the gateway's platform child writes a V8 CPU profile there (`node --cpu-prof`). */
const CPU_PROF_DIR = process.env.BENCH_LLM_CPU_PROF ?? '';

// No scenario in the shared table (run.js reads `default` as a list of them): only the report below.
export default [];

async function load(label, url, { path: urlPath, headers, bodies }, duration = SECONDS) {
  let turn = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration,
    requests: [
      {
        method: 'POST',
        path: urlPath,
        headers: { 'content-type': 'application/json', ...headers },
        body: bodies[0],
        ...(bodies.length > 1
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
  return result.requests.average;
}

/** POST with a keep-alive agent; milliseconds from the call to the first body byte, after the whole body. */
function firstByteMs(agent, port, urlPath, headers, body) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let first = 0;
    const req = httpRequest(
      {
        agent,
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: urlPath,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        const parts = [];
        res.on('data', (part) => {
          if (first === 0) first = performance.now();
          parts.push(part);
        });
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          if (res.statusCode !== 200 || !text.includes('data: [DONE]')) {
            reject(new Error(`stream ${urlPath} on :${port}: ${res.statusCode} ${text.slice(0, 300)}`));
          } else resolve(first - started);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Nearest-rank percentile of sorted samples. */
const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const fmt = (n, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** Distinct 200-word texts from a fixed word list and a seeded generator, so every run embeds the same. */
function texts() {
  const words = (
    'amber bergamot cedar dusk ember fig gardenia honey iris jasmine kelp lavender musk neroli oud ' +
    'patchouli quince rose saffron tonka umber vetiver wax yuzu zest candle wick jar lid flame smoke ' +
    'warm cool fresh green sweet bitter soft sharp bright dark light heavy evening morning winter summer ' +
    'spring autumn forest ocean garden meadow river stone paper linen cotton leather wood spice pepper ' +
    'clove cinnamon vanilla cocoa coffee tea mint basil sage thyme orange lemon lime grapefruit cherry ' +
    'plum peach apple pear berry the a of and with in on for from to by slowly gently quickly burns ' +
    'glows melts pours blends lingers fades rises settles fills room home quiet calm bold'
  ).split(' ');
  let seed = 12;
  const next = () => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    return seed >>> 8;
  };
  return Array.from({ length: EMBED_TEXTS }, () =>
    Array.from({ length: EMBED_WORDS }, () => words[next() % words.length]).join(' '),
  );
}

async function post(url, headers, body) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST ${url}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/**
 * Gateway vs a bare node:http proxy vs direct throughput, non-streaming; the round with the median
 * gateway/proxy ratio (the goal: ≥ 0.8).
 */
async function nonStreaming(fakeUrl, proxyUrl, platformUrl, auth) {
  const body = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'hello' }] });
  const direct = { path: '/v1/chat/completions', headers: {}, bodies: [body] };
  const gateway = { path: '/v1/chat/completions', headers: auth, bodies: [body] };
  const answer = await post(`${platformUrl}/v1/chat/completions`, auth, body);
  if (answer.choices?.[0]?.message?.content !== 'Hello from the bench model.') {
    throw new Error(`gateway answered ${JSON.stringify(answer).slice(0, 300)}`);
  }
  await load('direct warm-up', fakeUrl, direct, 2);
  await load('proxy warm-up', proxyUrl, direct, 2);
  await load('gateway warm-up', platformUrl, gateway, 2);
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const d = await load('direct', fakeUrl, direct);
    const b = await load('bare proxy', proxyUrl, direct);
    const g = await load('gateway', platformUrl, gateway);
    rounds.push({ d, b, g, ratio: g / b });
  }
  rounds.sort((x, y) => x.ratio - y.ratio);
  const { d, b, g, ratio } = rounds[Math.floor(rounds.length / 2)];
  return (
    `llm gateway (non-stream): gateway ${fmt(g)} req/s, bare node:http proxy ${fmt(b)} req/s, direct ${fmt(d)} req/s ` +
    `→ gateway/proxy ${fmt(ratio, 2)} (goal ≥ 0.8), proxy/direct ${fmt(b / d, 2)}, gateway/direct ${fmt(g / d, 2)} ` +
    `(median of ${ROUNDS} round${ROUNDS === 1 ? '' : 's'}, ${SECONDS}s each, ${CONNECTIONS} connections)`
  );
}

/** Streaming throughput (whole SSE answers), gateway vs the bare proxy; the round with the median ratio. */
async function streaming(proxyUrl, platformUrl, auth) {
  const body = JSON.stringify({
    model: 'bench-model',
    messages: [{ role: 'user', content: 'hello' }],
    stream: true,
  });
  const proxied = { path: '/v1/chat/completions', headers: {}, bodies: [body] };
  const gateway = { path: '/v1/chat/completions', headers: auth, bodies: [body] };
  await load('proxy stream warm-up', proxyUrl, proxied, 2);
  await load('gateway stream warm-up', platformUrl, gateway, 2);
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const b = await load('bare proxy stream', proxyUrl, proxied);
    const g = await load('gateway stream', platformUrl, gateway);
    rounds.push({ b, g, ratio: g / b });
  }
  rounds.sort((x, y) => x.ratio - y.ratio);
  const { b, g, ratio } = rounds[Math.floor(rounds.length / 2)];
  return (
    `llm gateway (stream): gateway ${fmt(g)} req/s vs bare node:http proxy ${fmt(b)} req/s → ratio ${fmt(ratio, 2)} ` +
    `(goal ≥ 0.8; median of ${ROUNDS} round${ROUNDS === 1 ? '' : 's'}, ${SECONDS}s each, ${CONNECTIONS} connections)`
  );
}

/** Time to the first streamed byte, direct and through the gateway, alternating request by request. */
async function timeToFirstChunk(fakePort, proxyPort, platformPort, auth) {
  const body = JSON.stringify({
    model: 'bench-model',
    messages: [{ role: 'user', content: 'hello' }],
    stream: true,
  });
  const directAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const proxyAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const gatewayAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const direct = [];
  const proxy = [];
  const gateway = [];
  try {
    for (let i = 0; i < TTFB_WARMUP; i++) {
      await firstByteMs(directAgent, fakePort, '/v1/chat/completions', {}, body);
      await firstByteMs(proxyAgent, proxyPort, '/v1/chat/completions', {}, body);
      await firstByteMs(gatewayAgent, platformPort, '/v1/chat/completions', auth, body);
    }
    for (let i = 0; i < TTFB_REQUESTS * ROUNDS; i++) {
      direct.push(await firstByteMs(directAgent, fakePort, '/v1/chat/completions', {}, body));
      proxy.push(await firstByteMs(proxyAgent, proxyPort, '/v1/chat/completions', {}, body));
      gateway.push(await firstByteMs(gatewayAgent, platformPort, '/v1/chat/completions', auth, body));
    }
  } finally {
    directAgent.destroy();
    proxyAgent.destroy();
    gatewayAgent.destroy();
  }
  for (const samples of [direct, proxy, gateway]) samples.sort((a, b) => a - b);
  const p = (samples) => [percentile(samples, 0.5), percentile(samples, 0.99)];
  const [[d50, d99], [b50, b99], [g50, g99]] = [p(direct), p(proxy), p(gateway)];
  return (
    `llm gateway (stream, time to first chunk): direct p50 ${fmt(d50, 1)} / p99 ${fmt(d99, 1)} ms; ` +
    `bare proxy p50 ${fmt(b50, 1)} / p99 ${fmt(b99, 1)} ms; ` +
    `gateway p50 ${fmt(g50, 1)} / p99 ${fmt(g99, 1)} ms; added over direct p50 ${fmt(g50 - d50, 1)} / p99 ${fmt(g99 - d99, 1)} ms ` +
    `(goal p50 ≤ 1, p99 ≤ 3 ms; ${direct.length} sequential requests each)`
  );
}

/** A process's CPU so far, user and system, in microseconds, from /proc. */
function cpuMicros(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: (Number(fields[11]) * 1e6) / USER_HZ, system: (Number(fields[12]) * 1e6) / USER_HZ };
}

/** One POST (a GET when `body` is null) on a keep-alive agent, its whole answer read; rejects on anything but a 200. */
function callOnce(agent, port, urlPath, headers, body) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        agent,
        host: '127.0.0.1',
        port,
        method: body === null ? 'GET' : 'POST',
        path: urlPath,
        headers:
          body === null
            ? headers
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`${urlPath} on :${port}: ${res.statusCode}`)),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

/** `calls` calls over CPU_CONNECTIONS keep-alive connections, each sending its next when one ends. */
async function burst(port, { path: urlPath, headers, bodies }, calls) {
  const agent = new Agent({ keepAlive: true, maxSockets: CPU_CONNECTIONS });
  let left = calls;
  const worker = async () => {
    while (left-- > 0) await callOnce(agent, port, urlPath, headers, bodies[0]);
  };
  try {
    await Promise.all(Array.from({ length: CPU_CONNECTIONS }, worker));
  } finally {
    agent.destroy();
  }
}

/** CPU µs per call of the server process `pid` over `CPU_CALLS` calls: total, user and system. */
async function cpuPerCall(port, request, pid) {
  const before = cpuMicros(pid);
  await burst(port, request, CPU_CALLS);
  const after = cpuMicros(pid);
  const user = (after.user - before.user) / CPU_CALLS;
  const system = (after.system - before.system) / CPU_CALLS;
  return { total: user + system, user, system };
}

/** The round with the median total. */
const medianRound = (rounds) => [...rounds].sort((a, b) => a.total - b.total)[Math.floor(rounds.length / 2)];
const cpuText = (c) => `${fmt(c.total)} µs (user ${fmt(c.user)}, system ${fmt(c.system)})`;

/**
 * CPU µs per call (utime + stime of the server process over a fixed number of calls), the gateway's
 * child and the bare proxy's alternating, non-streamed and streamed; the median of the rounds. On a
 * loaded machine this moves far less than throughput does. User and system time are shown apart (a
 * profile samples wall time, so socket writes that wake another process look dearer than they are),
 * and a public `GET /health` and an authenticated `GET /v1/models` on the gateway's child give the
 * platform's own floors per request. A minimal relay (bench/min-relay.js: reads and parses both
 * bodies, nothing else) shows what reading the bodies adds to the bare proxy's cost.
 */
async function cpuPerCallReport(proxy, minimal, platform, auth) {
  const lines = [];
  const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  for (const stream of [false, true]) {
    const body = JSON.stringify({
      model: 'bench-model',
      messages: [{ role: 'user', content: 'hello' }],
      ...(stream ? { stream: true } : {}),
    });
    const proxied = { path: '/v1/chat/completions', headers: {}, bodies: [body] };
    const gateway = { path: '/v1/chat/completions', headers: auth, bodies: [body] };
    await burst(proxy.port, proxied, 500);
    await burst(minimal.port, proxied, 500);
    await burst(platform.port, gateway, 500);
    const proxied$ = [];
    const minimal$ = [];
    const gateway$ = [];
    for (let round = 0; round < ROUNDS; round++) {
      proxied$.push(await cpuPerCall(proxy.port, proxied, proxy.child.pid));
      minimal$.push(await cpuPerCall(minimal.port, proxied, minimal.child.pid));
      gateway$.push(await cpuPerCall(platform.port, gateway, platform.child.pid));
    }
    const [b, m, g] = [medianRound(proxied$), medianRound(minimal$), medianRound(gateway$)];
    lines.push(
      `llm gateway (${stream ? 'stream' : 'non-stream'}, CPU per call): gateway ${cpuText(g)}, ` +
        `bare node:http proxy ${cpuText(b)}, minimal body-reading relay ${cpuText(m)} ` +
        `→ proxy/gateway ${fmt(b.total / g.total, 2)}, proxy/minimal relay ${fmt(b.total / m.total, 2)} ` +
        `(median of ${ROUNDS} alternating rounds of ${CPU_CALLS} calls, ${CPU_CONNECTIONS} connections; ` +
        `load average ${load()})`,
    );
  }
  // The platform's floors on the gateway's process: a public GET, then an authenticated one (key
  // check, usage count, request-log row), so the gateway's own share is what lies above the second.
  const floors = [
    ['GET /health', { path: '/health', headers: {}, bodies: [null] }],
    ['authenticated GET /v1/models', { path: '/v1/models', headers: auth, bodies: [null] }],
  ];
  for (const [label, request] of floors) {
    await burst(platform.port, request, 500);
    const floor$ = [];
    for (let round = 0; round < ROUNDS; round++)
      floor$.push(await cpuPerCall(platform.port, request, platform.child.pid));
    lines.push(
      `platform floor (${label} on the gateway's process, CPU per call): ${cpuText(medianRound(floor$))} ` +
        `(median of ${ROUNDS} rounds of ${CPU_CALLS} calls; load average ${load()})`,
    );
  }
  return lines;
}

/** builtin/hashed-ngrams on 200-word texts: in this process for ~2 s, then through /api/embed. */
async function embedder(platformUrl, auth) {
  const corpus = texts();
  for (let i = 0; i < 500; i++) embedHashedNgrams(corpus[i % corpus.length]);
  let count = 0;
  const started = performance.now();
  while (performance.now() - started < 2000) {
    for (const text of corpus) embedHashedNgrams(text);
    count += corpus.length;
  }
  const inProcess = count / ((performance.now() - started) / 1000);

  // Each request embeds its own 16 of the texts, turning through all of them.
  const bodies = corpus.map((_, i) =>
    JSON.stringify({
      model: 'builtin/hashed-ngrams',
      input: Array.from({ length: EMBED_BATCH }, (_, k) => corpus[(i + k) % corpus.length]),
    }),
  );
  const answer = await post(`${platformUrl}/api/embed`, auth, bodies[0]);
  if (answer.embeddings?.length !== EMBED_BATCH || answer.embeddings[0].length !== 384) {
    throw new Error(`/api/embed answered ${JSON.stringify(answer).slice(0, 300)}`);
  }
  const request = { path: '/api/embed', headers: auth, bodies };
  await load('/api/embed warm-up', platformUrl, request, 2);
  const runs = [];
  for (let round = 0; round < ROUNDS; round++) runs.push(await load('/api/embed', platformUrl, request));
  const gateway = median(runs) * EMBED_BATCH;
  return (
    `builtin/hashed-ngrams, ${EMBED_WORDS}-word texts: ${fmt(inProcess)} embeddings/s in process; ` +
    `${fmt(gateway)}/s through /api/embed (${EMBED_BATCH} texts per request, ${CONNECTIONS} connections)`
  );
}

/** Starts the fake upstream and a platform routed to it, measures, and stops both whatever happens. */
export async function report() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-bench-llm-'));
  let fake;
  let proxy;
  let minimal;
  let platform;
  try {
    fake = await start(path.join(bench, 'fake-llm-upstream.js'), {});
    proxy = await start(path.join(bench, 'bare-proxy.js'), { UPSTREAM_URL: `http://127.0.0.1:${fake.port}` });
    minimal = await start(path.join(bench, 'min-relay.js'), {
      UPSTREAM_URL: `http://127.0.0.1:${fake.port}`,
    });
    const key = generateKey('production');
    platform = await start(
      path.join(bench, 'platform-server.js'),
      platformEnv(dataDir, key, {
        OPENAI_API_KEY: 'bench',
        LLM_MODELS: JSON.stringify([
          {
            name: 'bench-model',
            provider: 'openai',
            baseUrl: `http://127.0.0.1:${fake.port}/v1`,
            upstreamModel: 'bench-model',
            timeoutMs: 10000,
          },
        ]),
      }),
      [...PLATFORM_NODE_FLAGS, ...(CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : [])],
    );
    const platformUrl = `http://127.0.0.1:${platform.port}`;
    await waitHealthy(platformUrl);
    const auth = { authorization: `Bearer ${key}` };
    const proxyUrl = `http://127.0.0.1:${proxy.port}`;
    const only = process.env.BENCH_LLM_PARTS?.split(',') ?? ['nonstream', 'stream', 'ttfb', 'cpu', 'embed'];
    const lines = [];
    if (only.includes('nonstream'))
      lines.push(await nonStreaming(`http://127.0.0.1:${fake.port}`, proxyUrl, platformUrl, auth));
    if (only.includes('stream')) lines.push(await streaming(proxyUrl, platformUrl, auth));
    if (only.includes('ttfb')) lines.push(await timeToFirstChunk(fake.port, proxy.port, platform.port, auth));
    if (only.includes('cpu')) lines.push(...(await cpuPerCallReport(proxy, minimal, platform, auth)));
    if (only.includes('embed')) lines.push(await embedder(platformUrl, auth));
    return lines;
  } finally {
    await Promise.all([stop(platform?.child), stop(proxy?.child), stop(minimal?.child), stop(fake?.child)]);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
