/**
 * Issue 35: what an agent turn with memory blocks and two tools costs over the model calls it makes.
 * One platform child (SQLite, fresh data directory) on the fake OpenAI-compatible upstream in its
 * tool-calling mode (a request offering tools is answered with calls of its first two; with their
 * results, with text). The agent has two memory blocks (persona, human: read into every turn's system
 * prompt) and two server tools (user_profile, blend_recommendations): a turn is the user message
 * stored, two model calls through the gateway, both tools run, the answer stored with its steps.
 * Its reference is the same two upstream calls made by this client straight to the fake (same system
 * prompt size, same tools, the second carrying the calls and their results), and the same two through
 * the gateway (`POST /v1/chat/completions`). Latency per turn, closed loop at CONCURRENCY, the three
 * runs alternated ROUNDS times so they share the machine's load; p50/p99 of all turns of each.
 * Run alone: `npm run build && BENCH_ONLY=agents-tools node bench/run.js` (BENCH_ONLY=agents runs it
 * with bench/scenarios/agents.js).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKey } from '../../dist/modules/auth/key-format.js';
import { PLATFORM_NODE_FLAGS, platformEnv, start, stop, waitHealthy } from '../children.js';
import { client, fmt, percentile } from '../kit.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const bench = path.join(here, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Turns in flight at once: latency, not saturation, is the figure. */
const CONCURRENCY = Number(process.env.BENCH_AGENT_TOOLS_CONCURRENCY ?? 4);
const MODEL = 'bench-model';
const ANSWER = 'Hello from the bench model.';
const QUESTION = 'Which blend suits me?';
const INSTRUCTIONS = 'You recommend fragrance blends. Be brief.';
const TOOLS = ['user_profile', 'blend_recommendations'];
const BLOCKS = [
  { label: 'persona', value: 'I am a calm perfumer who answers in one sentence.' },
  { label: 'human', value: 'Prefers woody notes; allergic to bergamot; shops on weekends.' },
];

// No scenario in the shared table: only the report below.
export default [];

/** One turn's requests, in order; each must answer 200, the last with the bench answer. */
async function turn(steps) {
  for (const step of steps) {
    const res = await fetch(step.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...step.headers },
      body: step.body,
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${step.url}: ${res.status} ${text.slice(0, 300)}`);
  }
}

/** CONCURRENCY loops of `steps` for SECONDS; every turn's milliseconds. */
async function closedLoop(steps, seconds = SECONDS) {
  const samples = [];
  const end = performance.now() + seconds * 1000;
  const loop = async () => {
    while (performance.now() < end) {
      const started = performance.now();
      await turn(steps);
      samples.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  return samples;
}

const stats = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
};

/** The agent (blocks, tools) checked once by hand, and the three kinds of turn measured. */
async function prepare(call, auth, url, upstream) {
  const agent = await call(
    'POST',
    '/api/agents',
    { name: 'bench tools agent', instructions: INSTRUCTIONS, model: MODEL, tools: TOOLS },
    [201],
  );
  for (const block of BLOCKS) await call('POST', `/api/agents/${agent.id}/memory/blocks`, block, [201]);
  const messagesPath = `/api/agents/${agent.id}/messages`;
  const first = await call('POST', messagesPath, { content: QUESTION }, [200]);
  const steps = first.messages?.[1]?.steps?.map((s) => s.type).join(',');
  if (first.messages?.[1]?.content !== ANSWER || steps !== 'model,tool_call,tool_call,model')
    throw new Error(`agent answered ${JSON.stringify(first).slice(0, 400)}`);
  const results = first.messages[1].steps.filter((s) => s.type === 'tool_call').map((s) => s.output);

  // What the agent sends the model: its instructions and memory blocks, the question; then the
  // calls and their results. The memory text is written like the agent's, the same size within bytes.
  const memory = BLOCKS.map(
    (b) => `<${b.label} characters="${b.value.length}/2000">\n${b.value}\n</${b.label}>`,
  ).join('\n');
  const system = {
    role: 'system',
    content: `${INSTRUCTIONS}\n\nYour memory blocks (edit them with memory_append and memory_replace to remember what matters):\n<memory>\n${memory}\n</memory>`,
  };
  const user = { role: 'user', content: QUESTION };
  const tools = TOOLS.map((name) => ({
    type: 'function',
    function: { name, description: `The ${name} tool.`, parameters: { type: 'object', properties: {} } },
  }));
  const calls = TOOLS.map((name, i) => ({
    id: `call_bench_${i}`,
    type: 'function',
    function: { name, arguments: '{}' },
  }));
  const afterTools = [
    system,
    user,
    { role: 'assistant', content: null, tool_calls: calls },
    ...calls.map((c, i) => ({
      role: 'tool',
      tool_call_id: c.id,
      content: typeof results[i] === 'string' ? results[i] : JSON.stringify(results[i]),
    })),
  ];
  const pair = (base, headers) => [
    { url: base, headers, body: JSON.stringify({ model: MODEL, messages: [system, user], tools }) },
    { url: base, headers, body: JSON.stringify({ model: MODEL, messages: afterTools, tools }) },
  ];
  const direct = pair(`${upstream}/v1/chat/completions`, {});
  const gateway = pair(`${url}/v1/chat/completions`, auth);
  // The fake's answers, checked: calls first, then the text.
  const callsFirst = await (await fetch(direct[0].url, { method: 'POST', body: direct[0].body })).json();
  if (callsFirst.choices?.[0]?.message?.tool_calls?.length !== 2)
    throw new Error(`upstream answered ${JSON.stringify(callsFirst).slice(0, 300)}`);
  return {
    agent: [{ url: `${url}${messagesPath}`, headers: auth, body: JSON.stringify({ content: QUESTION }) }],
    direct,
    gateway,
  };
}

export async function report() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-bench-agent-tools-'));
  let fake;
  let platform;
  try {
    fake = await start(path.join(bench, 'fake-llm-upstream.js'), {});
    const upstream = `http://127.0.0.1:${fake.port}`;
    const key = generateKey('production');
    platform = await start(
      path.join(bench, 'platform-server.js'),
      platformEnv(dataDir, key, {
        OPENAI_API_KEY: 'bench',
        LLM_MODELS: JSON.stringify([
          {
            name: MODEL,
            provider: 'openai',
            baseUrl: `${upstream}/v1`,
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
    const runs = await prepare(client(url, key), auth, url, upstream);
    const names = ['direct', 'gateway', 'agent'];
    for (const name of names) await closedLoop(runs[name], 2);
    const samples = { direct: [], gateway: [], agent: [] };
    for (let round = 0; round < ROUNDS; round++)
      for (const name of names) samples[name].push(...(await closedLoop(runs[name])));
    const s = Object.fromEntries(names.map((n) => [n, stats(samples[n])]));
    const line = (label, x) =>
      `${label}: p50 ${fmt(x.p50, 2)} ms, p99 ${fmt(x.p99, 2)} ms (${fmt(x.n)} turns)`;
    const over = (x, ref, label) =>
      `${label}: +${fmt(x.p50 - ref.p50, 2)} ms at p50, +${fmt(x.p99 - ref.p99, 2)} ms at p99, ` +
      `ratio ${fmt(x.p50 / ref.p50, 2)} at p50, ${fmt(x.p99 / ref.p99, 2)} at p99`;
    return [
      line('two upstream calls straight to the fake (tools offered; calls, then results → text)', s.direct),
      line('the same two calls through the gateway (/v1/chat/completions)', s.gateway),
      line('agent turn, 2 memory blocks, 2 server tools (user_profile, blend_recommendations)', s.agent),
      over(s.agent, s.direct, 'agent turn overhead over the direct calls'),
      over(s.gateway, s.direct, 'gateway overhead over the direct calls (two calls)'),
      over(s.agent, s.gateway, 'agent turn over the same two calls through the gateway'),
      `agents-tools: ${ROUNDS} rounds × ${SECONDS}s per run, ${CONCURRENCY} turns in flight, one platform ` +
        'child (SQLite) over the fake upstream in its tool-calling mode',
    ];
  } finally {
    await Promise.all([stop(platform?.child), stop(fake?.child)]);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
