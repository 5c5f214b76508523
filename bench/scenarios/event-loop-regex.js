/**
 * Issue 27, item 2: `/health` latency while caller-driven CPU work runs — idle, then while workflows
 * test a catastrophic-backtracking regular expression (a new pattern per item, from an expression)
 * over many items, then while the API parses its largest JSON body in the costliest shape (`[{},{},…]`),
 * then while a webhook takes its largest JSON body of records through a whole run. One probe at a
 * time, each timed from when it was sent.
 */
import { fmt, percentile, sleep } from '../kit.js';

const ITEMS = Number(process.env.BENCH_REGEX_ITEMS ?? 2_000);
const RUNS = 3;
const MB = 1_048_576;

export default [];

async function probe(baseUrl, work) {
  let done = false;
  const settled = work.finally(() => {
    done = true;
  });
  const latencies = [];
  while (!done) {
    const sent = performance.now();
    await (await fetch(`${baseUrl}/health`)).arrayBuffer();
    latencies.push(performance.now() - sent);
    await sleep(5);
  }
  await settled;
  return latencies.sort((a, b) => a - b);
}

async function idle(baseUrl, count = 200) {
  const latencies = [];
  for (let i = 0; i < count; i++) {
    const sent = performance.now();
    await (await fetch(`${baseUrl}/health`)).arrayBuffer();
    latencies.push(performance.now() - sent);
    await sleep(5);
  }
  return latencies.sort((a, b) => a - b);
}

async function activate(baseUrl, key, body) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const created = await fetch(`${baseUrl}/api/v1/workflows`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  });
  if (created.status !== 201) throw new Error(`create workflow: ${created.status} ${await created.text()}`);
  const { id } = await created.json();
  const activated = await fetch(`${baseUrl}/api/v1/workflows/${id}/activate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
  });
  if (activated.status !== 200) throw new Error(`activate: ${activated.status} ${await activated.text()}`);
}

const node = (name, type, typeVersion, parameters, extra = {}) => ({
  id: name,
  name,
  type: `n8n-nodes-base.${type}`,
  typeVersion,
  position: [0, 0],
  parameters,
  ...extra,
});

const regexWorkflow = {
  name: 'bench catastrophic regex',
  nodes: [
    node('Webhook', 'webhook', 2, { httpMethod: 'POST', path: 'bench-regex', responseMode: 'lastNode' }),
    node('Items', 'code', 2, {
      jsCode: `return Array.from({ length: ${ITEMS} }, (_, n) => ({ json: { text: 'a'.repeat(28) + (n % 2 ? '!' : ''), n } }));`,
    }),
    node(
      'Filter',
      'filter',
      2.2,
      {
        conditions: {
          options: { caseSensitive: true, leftValue: '', typeValidation: 'strict', version: 2 },
          conditions: [
            {
              id: 'c0',
              leftValue: '={{ $json.text }}',
              rightValue: '={{ "^(a+)+(?:x" + $json.n + ")?$" }}',
              operator: { type: 'string', operation: 'regex' },
            },
          ],
          combinator: 'and',
        },
        options: {},
      },
      { continueOnFail: true },
    ),
    node('Count', 'code', 2, { jsCode: 'return [{ json: { kept: $input.all().length } }];' }),
  ],
  connections: {
    Webhook: { main: [[{ node: 'Items', type: 'main', index: 0 }]] },
    Items: { main: [[{ node: 'Filter', type: 'main', index: 0 }]] },
    Filter: { main: [[{ node: 'Count', type: 'main', index: 0 }]] },
  },
};

const jsonWorkflow = {
  name: 'bench large json',
  nodes: [
    node('Webhook', 'webhook', 2, { httpMethod: 'POST', path: 'bench-large-json', responseMode: 'lastNode' }),
    node('Done', 'noOp', 1, {}),
  ],
  connections: { Webhook: { main: [[{ node: 'Done', type: 'main', index: 0 }]] } },
};

function records(limit) {
  const out = [];
  let size = 2;
  for (let i = 0; ; i++) {
    const record = JSON.stringify({
      id: i,
      name: `customer ${i}`,
      email: `c${i}@example.com`,
      total: i * 1.5,
    });
    if (size + record.length + 1 > limit) return `[${out.join(',')}]`;
    out.push(record);
    size += record.length + 1;
  }
}

async function expectStatus(promise, status, what) {
  const res = await promise;
  const text = await res.text();
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${text.slice(0, 300)}`);
}

export async function report({ baseUrl, key }) {
  await activate(baseUrl, key, regexWorkflow);
  await activate(baseUrl, key, jsonWorkflow);
  const post = (url, body, headers = {}) =>
    fetch(`${baseUrl}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
  await expectStatus(post('/webhook/bench-large-json', '[{"id":1}]'), 200, 'warm-up');

  const rows = [['idle', await idle(baseUrl)]];
  const regexRuns = Promise.all(
    Array.from({ length: RUNS }, () => expectStatus(post('/webhook/bench-regex', '{}'), 200, 'regex run')),
  );
  rows.push([`${RUNS} runs × ${fmt(ITEMS)} items, catastrophic regex`, await probe(baseUrl, regexRuns)]);
  const empties = `[${'{},'.repeat(Math.floor((MB - 1) / 3) - 1)}{}]`;
  rows.push([
    'API JSON body 1 MB of [{},{},…]',
    await probe(
      baseUrl,
      expectStatus(post('/api/v1/workflows', empties, { authorization: `Bearer ${key}` }), 400, 'api json'),
    ),
  ]);
  rows.push([
    'webhook JSON body 1 MB of records (whole run)',
    await probe(baseUrl, expectStatus(post('/webhook/bench-large-json', records(MB)), 200, 'webhook json')),
  ]);

  const lines = ['', '/health while caller-driven CPU work runs (issue 27, item 2):'];
  lines.push('  while                                           probes   p50 ms   p99 ms   max ms');
  for (const [label, sorted] of rows) {
    lines.push(
      `  ${label.padEnd(46)} ${String(sorted.length).padStart(6)} ${fmt(percentile(sorted, 0.5), 1).padStart(8)} ${fmt(percentile(sorted, 0.99), 1).padStart(8)} ${fmt(sorted.at(-1) ?? 0, 1).padStart(8)}`,
    );
  }
  return lines;
}
