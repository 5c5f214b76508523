import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../../../../core/http/outbound.js';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { WorkflowNode } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A tiny GraphQL endpoint: `hello(name)` and `add(a, b)` resolved by hand, errors as GraphQL sends them. */
function answer(query: string, variables: Record<string, unknown>, operationName: string | null) {
  if (query.includes('broken'))
    return { errors: [{ message: 'Cannot query field "broken" on type "Query".' }] };
  if (operationName === 'Add') return { data: { add: Number(variables.a) + Number(variables.b) } };
  const name = /hello\(name: "([^"]*)"\)/.exec(query)?.[1] ?? String(variables.name ?? 'world');
  return { data: { hello: `Hello, ${name}` } };
}

let server: Server;
let base: string;
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/private' && req.headers.authorization !== `Basic ${btoa('ada:pw')}`)
        return void res
          .writeHead(401, { 'content-type': 'application/json' })
          .end('{"errors":[{"message":"Unauthorized"}]}');
      if (url.pathname === '/html')
        return void res.writeHead(200, { 'content-type': 'text/html' }).end('<p>no</p>');
      let query = '';
      let variables: Record<string, unknown> = {};
      let operationName: string | null = null;
      if (req.method === 'GET') query = url.searchParams.get('query') ?? '';
      else if (req.headers['content-type'] === 'application/graphql') query = body;
      else {
        const parsed = JSON.parse(body) as {
          query: string;
          variables?: Record<string, unknown>;
          operationName?: string | null;
        };
        query = parsed.query;
        variables = parsed.variables ?? {};
        operationName = parsed.operationName ?? null;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(answer(query, variables, operationName)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const credentials: Record<string, Record<string, string>> = {
  basic: { user: 'ada', password: 'pw' },
  header: { name: 'X-Api-Token', value: 't0ken' },
};

function engineWith(allowHosts: string[]) {
  return new WorkflowEngine(
    testDeps({
      http: createOutboundHttp({ allowHosts, timeoutMs: 5_000 }),
      credential: async (id) => {
        const c = credentials[id];
        if (!c) throw new Error(`Credential '${id}' not found`);
        return c;
      },
    }),
    defaultNodeRegistry,
  );
}
const engine = engineWith(['127.0.0.1']);

async function run(
  parameters: Record<string, unknown>,
  extra: Partial<Pick<WorkflowNode, 'credentials' | 'typeVersion'>> = {},
  e = engine,
) {
  const d = workflow(
    [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      { name: 'GraphQL', type: 'n8n-nodes-base.graphql', typeVersion: 1.1, parameters, ...extra },
    ],
    [['Start', 'GraphQL']],
  );
  const problems = e.validate(d);
  if (problems.length > 0) return { problems, out: null, json: [] };
  const out = await e.run(d, { nodeName: 'Start', items: [{ json: { who: 'Grace' } }] }, ctx);
  return { problems, out, json: jsonOf(out.state, 'GraphQL') };
}

describe('GraphQL node (n8n-nodes-base.graphql) against a local GraphQL endpoint', () => {
  it('POSTs JSON with variables and operation name, as n8n v1.1 does by default', async () => {
    const { json, out } = await run({
      endpoint: `${base}/graphql`,
      query: 'query Add($a: Int!, $b: Int!) { add(a: $a, b: $b) }',
      variables: '={{ JSON.stringify({ a: 2, b: 40 }) }}',
      operationName: 'Add',
    });
    expect(out?.status).toBe('success');
    expect(json).toEqual([{ data: { add: 42 } }]);
    const last = seen.at(-1) as Seen;
    expect(last.method).toBe('POST');
    expect(last.headers['content-type']).toBe('application/json');
    expect(JSON.parse(last.body)).toEqual({
      query: 'query Add($a: Int!, $b: Int!) { add(a: $a, b: $b) }',
      variables: { a: 2, b: 40 },
      operationName: 'Add',
    });
  });

  it('sends a raw GraphQL body (v1 default) and GET with ?query=, expressions per item', async () => {
    const raw = await run(
      { endpoint: `${base}/graphql`, query: "={{ '{ hello(name: \"' + $json.who + '\") }' }}" },
      { typeVersion: 1 },
    );
    expect(raw.json).toEqual([{ data: { hello: 'Hello, Grace' } }]);
    expect(seen.at(-1)?.headers['content-type']).toBe('application/graphql');
    const get = await run({
      requestMethod: 'GET',
      endpoint: `${base}/graphql`,
      query: '{ hello(name: "Ada") }',
    });
    expect(get.json).toEqual([{ data: { hello: 'Hello, Ada' } }]);
    expect(seen.at(-1)?.method).toBe('GET');
    expect(seen.at(-1)?.url).toContain('query=');
  });

  it('authenticates with basic and header credentials, and fails without them', async () => {
    const ok = await run(
      { authentication: 'basicAuth', endpoint: `${base}/private`, query: '{ hello }' },
      { credentials: { httpBasicAuth: { id: 'basic', name: 'b' } } },
    );
    expect(ok.json).toEqual([{ data: { hello: 'Hello, world' } }]);
    const denied = await run({ endpoint: `${base}/private`, query: '{ hello }' });
    expect(denied.out?.status).toBe('error');
    expect(denied.out?.state.error?.message).toBe('Unauthorized');
    const header = await run(
      { authentication: 'headerAuth', endpoint: `${base}/graphql`, query: '{ hello }' },
      { credentials: { httpHeaderAuth: 'header' } },
    );
    expect(header.out?.status).toBe('success');
    expect(seen.at(-1)?.headers['x-api-token']).toBe('t0ken');
  });

  it('fails the node on GraphQL errors and on a body that is not JSON; string format keeps the text', async () => {
    const errors = await run({ endpoint: `${base}/graphql`, query: '{ broken }' });
    expect(errors.out?.state.error?.message).toBe('Cannot query field "broken" on type "Query".');
    const html = await run({ endpoint: `${base}/html`, query: '{ hello }' });
    expect(html.out?.state.error?.message).toContain('Response body is not valid JSON');
    const text = await run({
      endpoint: `${base}/html`,
      query: '{ hello }',
      responseFormat: 'string',
      dataPropertyName: 'raw',
    });
    expect(text.json).toEqual([{ raw: '<p>no</p>' }]);
  });

  it('refuses at save what it cannot honour, and private hosts unless allowed', async () => {
    const insecure = await run({
      endpoint: `${base}/graphql`,
      query: '{ hello }',
      allowUnauthorizedCerts: true,
    });
    expect(insecure.problems.map((p) => p.path)).toEqual(['nodes[1].parameters.allowUnauthorizedCerts']);
    const oauth = await run({ endpoint: `${base}/graphql`, query: '{ hello }', authentication: 'oAuth2' });
    expect(oauth.problems[0]?.message).toContain("'oAuth2' is not supported here");
    const unknown = await run({ endpoint: `${base}/graphql`, query: '{ hello }', nope: 1 });
    expect(unknown.problems.length).toBeGreaterThan(0);
    const guarded = await run({ endpoint: `${base}/graphql`, query: '{ hello }' }, {}, engineWith([]));
    expect(guarded.out?.state.error?.message).toContain('not allowed');
  });
});
