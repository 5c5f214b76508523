import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PREDEFINED_CASES } from '../../../../../../test/workflows/support/predefined-cases.js';
import { createOutboundHttp } from '../../../../../core/http/outbound.js';
import { ExpressionEvaluator } from '../../../engine/expressions.js';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item, WorkflowNode } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';
import { buildRequest } from './build.js';
import { paginate } from './pagination.js';
import { PREDEFINED_CREDENTIAL_TYPES } from './predefined/index.js';
import { responseItems } from './response.js';
import {
  HttpRequestV4Parameters,
  type HttpRequestV4Params,
  type PaginationParams,
  PaginationSettings,
  type ResponseParams,
} from './schema.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let base: string;
const seen: Seen[] = [];

/** Pages of `/pages`: three full pages, then an empty one answered with 404. */
const page = (n: number) => (n <= 3 ? [{ id: n * 10 + 1 }, { id: n * 10 + 2 }] : []);

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const url = new URL(req.url ?? '/', 'http://x');
      const json = (status: number, data: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(data));
      if (url.pathname === '/text')
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
      if (url.pathname === '/fail') return void json(500, { error: 'boom' });
      // A server that echoes the credential it was sent in an error.
      if (url.pathname === '/leaky') return void json(401, { error: `bad key ${req.headers['x-api-key']}` });
      // `/hop/N` redirects N times, then answers.
      if (url.pathname.startsWith('/hop/')) {
        const n = Number(url.pathname.slice(5));
        if (n <= 0) return void json(200, { arrived: true });
        return void res.writeHead(302, { location: `/hop/${n - 1}` }).end();
      }
      if (url.pathname === '/slow') return void setTimeout(() => json(200, { late: true }), 500);
      if (url.pathname === '/pages') {
        const n = Number(url.searchParams.get('page') ?? '1');
        const items = page(n);
        return void json(items.length > 0 ? 200 : 404, items, { 'next-url': `${base}/pages?page=${n + 1}` });
      }
      if (url.pathname === '/cursor') {
        const n = Number(url.searchParams.get('cursor') ?? '1');
        return void json(200, { items: page(n), next: n < 3 ? `${base}/cursor?cursor=${n + 1}` : null });
      }
      json(200, { method: req.method, url: req.url, body: body === '' ? null : body });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const credentials: Record<string, Record<string, string>> = {
  basic: { user: 'ada', password: 'pw' },
  bearer: { token: 't0k' },
  headerLong: { name: 'X-Api-Key', value: 'hk-7c2d-91ab-secret' },
  header: { name: 'X-Api-Key', value: 'k3y' },
  query: { name: 'api_key', value: 'q1' },
  custom: { json: '{"headers":{"x-custom":"c1"},"qs":{"sig":"s1"}}' },
  notion: { apiKey: 'n1' },
  empty: {},
  erpHalf: { apiKey: 'erp-key-half' },
  ...Object.fromEntries(PREDEFINED_CASES.map((c) => [c.id, c.data])),
};

const engine = new WorkflowEngine(
  testDeps({
    http: createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 }),
    credential: async (id) => {
      const c = credentials[id];
      if (!c) throw new Error(`Credential '${id}' not found`);
      return c;
    },
  }),
  defaultNodeRegistry,
);

const def = (
  parameters: Record<string, unknown>,
  extra: Partial<Pick<WorkflowNode, 'credentials' | 'typeVersion'>> = {},
) =>
  workflow(
    [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      { name: 'HTTP', type: 'n8n-nodes-base.httpRequest', typeVersion: 4.2, parameters, ...extra },
    ],
    [['Start', 'HTTP']],
  );

async function run(
  parameters: Record<string, unknown>,
  extra: Partial<Pick<WorkflowNode, 'credentials' | 'typeVersion'>> = {},
  items: Item[] = [{ json: { name: 'Ada' } }],
) {
  const d = def(parameters, extra);
  expect(engine.validate(d)).toEqual([]);
  seen.length = 0;
  const out = await engine.run(d, { nodeName: 'Start', items }, ctx);
  return { out, json: jsonOf(out.state, 'HTTP') };
}

const http = createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 });

const evaluator = new ExpressionEvaluator(1_000);

/** Pagination straight through `paginate`, its expressions in the sandbox as the node runs them. */
async function pages(
  url: string,
  pagination: Record<string, unknown>,
  response: Partial<ResponseParams> = {},
) {
  const p = Value.Default(HttpRequestV4Parameters, { url, options: {} }) as HttpRequestV4Params;
  const settings = Value.Default(PaginationSettings, structuredClone(pagination)) as PaginationParams;
  const options: ResponseParams = {
    fullResponse: false,
    neverError: false,
    responseFormat: 'autodetect',
    outputPropertyName: 'data',
    ...response,
  };
  seen.length = 0;
  const responses = await paginate(buildRequest(p, 4.2, null), settings, {
    send: http,
    evaluate: (source, scope) =>
      evaluator.evaluate(source, {
        json: {},
        node: {},
        workflow: { id: 'wf', name: 'pages' },
        execution: { id: 'exec_1', mode: 'manual', resumeUrl: '' },
        env: {},
        now: new Date(),
        extra: { ...scope },
      }),
    version: 4.2,
    neverError: options.neverError,
    autodetect: options.responseFormat === 'autodetect',
  });
  return responses.flatMap((r) => responseItems(r, options));
}

describe('n8n-nodes-base.httpRequest v4.x', () => {
  it('sends query, headers and a JSON body from fields (dot notation from 4.0)', async () => {
    const { json } = await run({
      method: 'POST',
      url: `${base}/echo`,
      sendQuery: true,
      queryParameters: {
        parameters: [
          { name: 'q', value: '={{ $json.name }}' },
          { name: 'n', value: '2' },
        ],
      },
      sendHeaders: true,
      headerParameters: { parameters: [{ name: 'X-Trace', value: 'abc' }] },
      sendBody: true,
      bodyParameters: { parameters: [{ name: 'user.name', value: '={{ $json.name }}' }] },
      options: {},
    });
    expect(json).toEqual([{ method: 'POST', url: '/echo?q=Ada&n=2', body: '{"user":{"name":"Ada"}}' }]);
    expect(seen[0]?.headers['x-trace']).toBe('abc');
    expect(seen[0]?.headers['content-type']).toBe('application/json');
  });

  it('keeps names flat in v3 and takes JSON query, headers and body', async () => {
    const { json } = await run(
      {
        method: 'PUT',
        url: `${base}/echo`,
        sendQuery: true,
        specifyQuery: 'json',
        jsonQuery: '{"tag":["a","b"]}',
        sendHeaders: true,
        specifyHeaders: 'json',
        jsonHeaders: '{"X-Mixed":"M"}',
        sendBody: true,
        specifyBody: 'json',
        jsonBody: '{"a.b":1}',
        options: { queryParameterArrays: 'repeat', lowercaseHeaders: false },
      },
      { typeVersion: 3 },
    );
    expect(json).toEqual([{ method: 'PUT', url: '/echo?tag=a&tag=b', body: '{"a.b":1}' }]);
    expect(seen[0]?.headers['x-mixed']).toBe('M');
  });

  it('sends form-urlencoded, multipart and raw bodies', async () => {
    const form = await run({
      method: 'POST',
      url: `${base}/echo`,
      sendBody: true,
      contentType: 'form-urlencoded',
      bodyParameters: {
        parameters: [
          { name: 'a', value: '1 2' },
          { name: 'b', value: 'x&y' },
        ],
      },
    });
    expect(form.json[0]?.body).toBe('a=1%202&b=x%26y');
    expect(seen[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');

    const multi = await run({
      method: 'POST',
      url: `${base}/echo`,
      sendBody: true,
      contentType: 'multipart-form-data',
      bodyParameters: { parameters: [{ name: 'field', value: 'v1' }] },
    });
    expect(String(multi.json[0]?.body)).toMatch(/name="field"\r\n\r\nv1\r\n/);
    expect(seen[0]?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);

    const raw = await run({
      method: 'POST',
      url: `${base}/echo`,
      sendBody: true,
      contentType: 'raw',
      rawContentType: 'text/csv',
      body: 'a,b\n1,2',
    });
    expect(raw.json[0]?.body).toBe('a,b\n1,2');
    expect(seen[0]?.headers['content-type']).toBe('text/csv');
  });

  it.each([
    ['httpBasicAuth', 'basic', (s: Seen) => s.headers.authorization === `Basic ${btoa('ada:pw')}`],
    ['httpBearerAuth', 'bearer', (s: Seen) => s.headers.authorization === 'Bearer t0k'],
    ['httpHeaderAuth', 'header', (s: Seen) => s.headers['x-api-key'] === 'k3y'],
    ['httpQueryAuth', 'query', (s: Seen) => s.url === '/echo?api_key=q1'],
    ['httpCustomAuth', 'custom', (s: Seen) => s.headers['x-custom'] === 'c1' && s.url === '/echo?sig=s1'],
  ])('applies %s credentials (n8n export shape {id, name})', async (type, id, check) => {
    const { out } = await run(
      { url: `${base}/echo`, authentication: 'genericCredentialType', genericAuthType: type },
      { credentials: { [type]: { id, name: 'mine' } } as unknown as Record<string, string> },
    );
    expect(out.status).toBe('success');
    expect(seen[0] && check(seen[0])).toBe(true);
  });

  it.each(PREDEFINED_CASES.map((c) => [c.id, c] as const))(
    'applies the predefined credential %s as n8n’s credential class authenticates',
    async (_id, c) => {
      const { out } = await run(
        { url: `${base}/echo`, authentication: 'predefinedCredentialType', nodeCredentialType: c.type },
        { credentials: { [c.type]: { id: c.id, name: 'mine' } } as unknown as Record<string, string> },
      );
      expect(out.status).toBe('success');
      const headers = Object.fromEntries(Object.keys(c.headers).map((h) => [h, seen[0]?.headers[h]]));
      expect(headers).toEqual(c.headers);
      expect(seen[0]?.url).toBe(c.query ? `/echo?${c.query}` : '/echo');
    },
  );

  it('has a case for every predefined credential type served (a new type needs one)', () => {
    expect([...new Set(PREDEFINED_CASES.map((c) => c.type))].sort()).toEqual(
      [...PREDEFINED_CREDENTIAL_TYPES].sort(),
    );
  });

  it.each(PREDEFINED_CREDENTIAL_TYPES.filter((t) => t !== 'qdrantApi'))(
    'a %s credential without its fields fails naming the field, before sending',
    async (type) => {
      const { out } = await run(
        { url: `${base}/echo`, authentication: 'predefinedCredentialType', nodeCredentialType: type },
        { credentials: { [type]: 'empty' } },
      );
      expect(out.status).toBe('error');
      const fields = Object.keys(PREDEFINED_CASES.find((c) => c.type === type)?.data ?? {});
      const named = out.state.error?.message.match(/^The (\w+) credential has no '(\w+)'$/);
      expect(named?.[1]).toBe(type);
      expect(fields).toContain(named?.[2]);
      expect(seen).toEqual([]);
    },
  );

  it('names the missing field, not the value it has (ERPNext without its secret)', async () => {
    const { out } = await run(
      { url: `${base}/echo`, authentication: 'predefinedCredentialType', nodeCredentialType: 'erpNextApi' },
      { credentials: { erpNextApi: 'erpHalf' } },
    );
    expect(out.state.error?.message).toBe("The erpNextApi credential has no 'apiSecret'");
    expect(JSON.stringify(out.state)).not.toContain('erp-key-half');
  });

  it('shows the credential’s query parameter as hidden in $request, and still sends it', async () => {
    const { out } = await run(
      {
        url: `${base}/pages`,
        authentication: 'predefinedCredentialType',
        nodeCredentialType: 'pipedriveApi',
        options: {
          pagination: {
            pagination: {
              parameters: {
                parameters: [
                  { type: 'qs', name: 'page', value: '={{ $pageCount + 1 }}' },
                  { type: 'qs', name: 'saw', value: '={{ $request.qs.api_token }}' },
                ],
              },
              paginationCompleteWhen: 'other',
              completeExpression: '={{ $pageCount >= 1 }}',
            },
          },
        },
      },
      { credentials: { pipedriveApi: 'pipedriveApi' } },
    );
    expect(out.state.error).toBeNull();
    expect(seen.map((s) => new URL(s.url, base).searchParams.get('saw'))).toEqual(['**hidden**']);
    expect(seen.every((s) => s.url.includes('api_token=pipe-token-1'))).toBe(true);
  });

  it('sends no Qdrant key when the credential has none (a local Qdrant)', async () => {
    const { out } = await run(
      { url: `${base}/echo`, authentication: 'predefinedCredentialType', nodeCredentialType: 'qdrantApi' },
      { credentials: { qdrantApi: 'empty' } },
    );
    expect(out.status).toBe('success');
    expect(seen[0]?.headers['api-key']).toBeUndefined();
  });

  it('keeps a Notion-Version header the request sets itself', async () => {
    await run(
      {
        url: `${base}/echo`,
        authentication: 'predefinedCredentialType',
        nodeCredentialType: 'notionApi',
        sendHeaders: true,
        headerParameters: { parameters: [{ name: 'Notion-Version', value: '2022-06-28' }] },
      },
      { credentials: { notionApi: 'notion' } },
    );
    expect(seen[0]?.headers['notion-version']).toBe('2022-06-28');
  });

  it('reads a credential given as a plain id, and fails without one', async () => {
    const ok = await run(
      { url: `${base}/echo`, authentication: 'genericCredentialType', genericAuthType: 'httpBearerAuth' },
      { credentials: { httpBearerAuth: 'bearer' } },
    );
    expect(seen[0]?.headers.authorization).toBe('Bearer t0k');
    expect(ok.out.status).toBe('success');
    const missing = await run({
      url: `${base}/echo`,
      authentication: 'genericCredentialType',
      genericAuthType: 'httpBearerAuth',
    });
    expect(missing.out.state.error?.message).toBe(
      'Node does not have any credentials set for "httpBearerAuth"',
    );
  });

  it('refuses at save time what it cannot do, naming each parameter', () => {
    const problems = (parameters: Record<string, unknown>) =>
      engine.validate(def(parameters)).map((p) => p.path.replace('nodes[1].', ''));
    expect(
      problems({
        url: 'https://x.test',
        authentication: 'predefinedCredentialType',
        nodeCredentialType: 'googleApi',
      }),
    ).toEqual(['parameters.nodeCredentialType']);
    expect(
      problems({
        url: 'https://x.test',
        authentication: 'genericCredentialType',
        genericAuthType: 'oAuth1Api',
      }),
    ).toEqual(['parameters.genericAuthType']);
    // OAuth2, generic and predefined, is served (credentials/oauth2).
    expect(
      problems({
        url: 'https://x.test',
        authentication: 'genericCredentialType',
        genericAuthType: 'oAuth2Api',
      }),
    ).toEqual([]);
    expect(
      problems({
        url: 'https://x.test',
        authentication: 'predefinedCredentialType',
        nodeCredentialType: 'googleSheetsOAuth2Api',
      }),
    ).toEqual([]);
    expect(
      problems({
        url: 'https://x.test',
        sendBody: true,
        contentType: 'binaryData',
        options: {
          allowUnauthorizedCerts: true,
          proxy: 'http://p:3128',
          response: { response: { responseFormat: 'file' } },
          redirect: { redirect: { followRedirects: false } },
        },
      }),
    ).toEqual([
      // Binary bodies, file responses and redirect options are supported.
      'parameters.options.allowUnauthorizedCerts',
      'parameters.options.proxy',
    ]);
    expect(problems({ url: 'https://x.test', bogus: 1, options: { nope: true } })).toEqual(
      expect.arrayContaining(['parameters.bogus', 'parameters.options.nope']),
    );
    // n8n's credential-only variants export a notice and a nameless field, empty; n8n's Request
    // Options node setting comes empty on every kind of node: all taken, a value in them is not.
    expect(problems({ url: 'https://x.test', httpVariantWarning: '', '': '', requestOptions: {} })).toEqual(
      [],
    );
    expect(problems({ url: 'https://x.test', '': 'x', requestOptions: { proxy: 'http://p:1' } })).toEqual([
      'parameters.',
      'parameters.requestOptions.proxy',
    ]);
  });

  it("follows redirects as n8n's redirect option says: not at all, or up to a count (at most 5)", async () => {
    const followed = await run({ url: `${base}/hop/2`, options: {} });
    expect(followed.json).toEqual([{ arrived: true }]);

    const stay = await run({
      url: `${base}/hop/2`,
      options: {
        redirect: { redirect: { followRedirects: false } },
        response: { response: { fullResponse: true, neverError: true } },
      },
    });
    expect(stay.json[0]).toMatchObject({ statusCode: 302, headers: { location: '/hop/1' } });

    const tooMany = await run({
      url: `${base}/hop/3`,
      options: { redirect: { redirect: { maxRedirects: 2 } } },
    });
    expect(tooMany.out.state.error?.message).toContain('More than 2 redirects');
    const enough = await run({
      url: `${base}/hop/3`,
      options: { redirect: { redirect: { maxRedirects: 3 } } },
    });
    expect(enough.json).toEqual([{ arrived: true }]);
    // n8n's default of 21 meets the platform's own limit.
    const capped = await run({
      url: `${base}/hop/6`,
      options: { redirect: { redirect: { maxRedirects: 21 } } },
    });
    expect(capped.out.state.error?.message).toContain('More than 5 redirects');
  });

  it('returns the full response, text as `data`, and passes errors on with neverError', async () => {
    const text = await run({
      url: `${base}/text`,
      options: { response: { response: { fullResponse: true, responseFormat: 'text' } } },
    });
    expect(text.json[0]).toMatchObject({ data: 'hello', statusCode: 200, statusMessage: 'OK' });
    expect(text.json[0]?.headers).toMatchObject({ 'content-type': 'text/plain' });

    const auto = await run({ url: `${base}/text` });
    expect(auto.json).toEqual([{ data: 'hello' }]);

    const failed = await run({ url: `${base}/fail` });
    expect(failed.out.state.error).toMatchObject({
      message: 'The service was not able to process your request',
    });

    const passed = await run({
      url: `${base}/fail`,
      options: { response: { response: { neverError: true, fullResponse: true } } },
    });
    expect(passed.json[0]).toMatchObject({ statusCode: 500, body: { error: 'boom' } });
  });

  it('through the engine, pagination expressions are n8n JavaScript with $response/$pageCount/$version', async () => {
    // n8n reads `options.pagination` raw (`rawExpressions`): the node evaluates it per page, in the sandbox.
    const { out } = await run({
      url: `${base}/pages`,
      options: {
        pagination: {
          pagination: {
            parameters: {
              parameters: [
                {
                  type: 'qs',
                  name: 'page',
                  value: '={{ Math.max($pageCount + 1, $version >= 4 ? 1 : 9) + ($json.name.length - 3) }}',
                },
              ],
            },
          },
        },
      },
    });
    expect(out.state.error).toBeNull();
    expect(out.status).toBe('success');
    expect(seen.map((s) => s.url)).toEqual([
      '/pages?page=1',
      '/pages?page=2',
      '/pages?page=3',
      '/pages?page=4',
    ]);

    // One of n8n's own expression errors (a node that does not exist) fails the node, naming the parameter.
    const bad = await run({
      url: `${base}/pages`,
      options: {
        pagination: {
          pagination: {
            parameters: { parameters: [{ type: 'qs', name: 'p', value: "={{ $('Nope').item.json.page }}" }] },
          },
        },
      },
    });
    expect(bad.out.state.error?.message).toContain("Pagination parameter 'p'");
    expect(bad.out.state.error?.message).toContain("Referenced node doesn't exist");
  });

  it('paginates by updating a parameter until the response is empty', async () => {
    const json = await pages(
      `${base}/pages`,
      { parameters: { parameters: [{ type: 'qs', name: 'page', value: '={{ $pageCount + 1 }}' }] } },
      { neverError: true },
    );
    expect(json).toEqual([{ id: 11 }, { id: 12 }, { id: 21 }, { id: 22 }, { id: 31 }, { id: 32 }]);
    expect(seen.map((s) => s.url)).toEqual([
      '/pages?page=1',
      '/pages?page=2',
      '/pages?page=3',
      '/pages?page=4',
    ]);
  });

  it('paginates by next URL until a status code, and by a complete expression', async () => {
    const byStatus = await pages(`${base}/pages`, {
      paginationMode: 'responseContainsNextURL',
      nextURL: '={{ $response.headers["next-url"] }}',
      paginationCompleteWhen: 'receiveSpecificStatusCodes',
      statusCodesWhenComplete: '404',
    });
    expect(byStatus).toHaveLength(6);
    expect(seen).toHaveLength(4);

    const byExpression = await pages(`${base}/cursor`, {
      paginationMode: 'responseContainsNextURL',
      nextURL: '={{ $response.body.next }}',
      paginationCompleteWhen: 'other',
      completeExpression: '={{ $response.body.next === null }}',
    });
    expect(byExpression.map((j) => (j.items as unknown[]).length)).toEqual([2, 2, 2]);
    expect(seen.map((s) => s.url)).toEqual(['/cursor', '/cursor?cursor=2', '/cursor?cursor=3']);
  });

  it('stops at maxRequests, and fails going on past an error status', async () => {
    const limited = await pages(`${base}/pages`, {
      paginationMode: 'responseContainsNextURL',
      nextURL: '={{ $response.headers["next-url"] }}',
      limitPagesFetched: true,
      maxRequests: 2,
    });
    expect(limited).toEqual([{ id: 11 }, { id: 12 }, { id: 21 }, { id: 22 }]);
    // An expression (templates take it from the item) is evaluated; one that is no number fails.
    const fromExpression = await pages(`${base}/pages`, {
      paginationMode: 'responseContainsNextURL',
      nextURL: '={{ $response.headers["next-url"] }}',
      limitPagesFetched: true,
      maxRequests: '={{ 1 + 0 }}',
    });
    expect(fromExpression).toEqual([{ id: 11 }, { id: 12 }]);
    await expect(
      pages(`${base}/pages`, {
        paginationMode: 'responseContainsNextURL',
        limitPagesFetched: true,
        maxRequests: '={{ "many" }}',
      }),
    ).rejects.toThrow('Pagination max requests must be a number (got \'={{ "many" }}\')');
    await expect(
      pages(`${base}/pages`, {
        paginationMode: 'responseContainsNextURL',
        nextURL: '={{ $response.headers["next-url"] }}',
        paginationCompleteWhen: 'other',
        completeExpression: '={{ $pageCount > 10 }}',
      }),
    ).rejects.toThrow('404 - "[]"');
  });

  it('a paginated error status that echoes the credential fails without it', async () => {
    const { out } = await run(
      {
        url: `${base}/leaky`,
        authentication: 'genericCredentialType',
        genericAuthType: 'httpHeaderAuth',
        options: {
          pagination: {
            pagination: {
              paginationMode: 'updateAParameterInEachRequest',
              parameters: { parameters: [{ type: 'qs', name: 'page', value: '={{ $pageCount + 1 }}' }] },
              paginationCompleteWhen: 'other',
              completeExpression: '={{ $pageCount > 3 }}',
            },
          },
        },
      },
      {
        credentials: { httpHeaderAuth: { id: 'headerLong', name: 'mine' } } as unknown as Record<
          string,
          string
        >,
      },
    );
    expect(seen[0]?.headers['x-api-key']).toBe('hk-7c2d-91ab-secret');
    expect(out.state.error?.message).toContain('401 - ');
    expect(out.state.error?.message).toContain('bad key ');
    expect(out.state.error?.message).not.toContain('hk-7c2d-91ab-secret');
  });

  it('stops when the same answer keeps coming', async () => {
    await expect(
      pages(`${base}/echo`, { parameters: { parameters: [{ type: 'qs', name: 'same', value: '1' }] } }),
    ).rejects.toThrow('The returned response was identical 5x, so requests got stopped');
    expect(seen).toHaveLength(4);
  });

  it('pauses between batches and fails on a timeout', async () => {
    const items = [{ json: { n: 1 } }, { json: { n: 2 } }, { json: { n: 3 } }];
    const t0 = Date.now();
    const batched = await run(
      { url: `${base}/echo`, options: { batching: { batch: { batchSize: 1, batchInterval: 100 } } } },
      {},
      items,
    );
    expect(batched.json).toHaveLength(3);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(200);

    const slow = await run({ url: `${base}/slow`, options: { timeout: 100 } });
    expect(slow.out.status).toBe('error');
    expect(slow.out.state.error?.message).toMatch(/timed out after 100 ms/);
  });
});
