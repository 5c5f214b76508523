import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import type {
  EngineDeps,
  OutboundRequest,
  WorkflowDefinition,
} from '../../src/modules/workflows/engine/types.js';
import { validateWorkflow } from '../../src/modules/workflows/engine/validate.js';
import { defaultNodeRegistry } from '../../src/modules/workflows/nodes/index.js';
import { loadFixture, runFixture } from './support/n8n-fixtures.js';

/**
 * n8n's HTTP Request v1 and v2 against a local server that records what it received: a real template
 * (its public API's host pointed at the local server) and the legacy parameter shapes.
 */

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
const seen: Seen[] = [];
let server: Server;
let base = '';
let deps: Partial<EngineDeps>;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (req.url?.startsWith('/moved')) {
        res.writeHead(302, { location: '/list' }).end();
      } else if (req.url?.startsWith('/status/')) {
        res
          .writeHead(Number(req.url.slice(8)), { 'content-type': 'application/json' })
          .end('{"error":"nope"}');
      } else if (req.url?.startsWith('/text')) {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('plain words');
      } else if (req.url?.startsWith('/list')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('[{"a":1},{"a":2}]');
      } else if (req.url?.startsWith('/image')) {
        res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([137, 80, 78, 71]));
      } else {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ drinks: [{ idDrink: '11007', strDrink: 'Margarita' }] }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const outbound = createOutboundHttp({ allowHosts: [new URL(base).host], timeoutMs: 10_000 });
  // The template's public API host answers from the local server.
  const http = (req: OutboundRequest) =>
    outbound({ ...req, url: req.url.replace('https://www.thecocktaildb.com', base) });
  deps = {
    http,
    tenant: 'acct_http_v1',
    credential: async (id): Promise<Record<string, string>> => {
      if (id === 'basic') return { user: 'ada', password: 's3cret' };
      if (id === 'header') return { name: 'X-Api-Key', value: 'k-123' };
      throw new Error(`Credential '${id}' not found`);
    },
  };
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  seen.length = 0;
});

function httpV(version: number, parameters: Record<string, unknown>, credentials?: Record<string, unknown>) {
  return {
    id: 'wf_http_v1',
    name: 'http v1',
    nodes: [
      {
        id: 'a',
        name: 'Start',
        type: 'n8n-nodes-base.manualTrigger',
        typeVersion: 1,
        position: [0, 0],
        parameters: {},
      },
      {
        id: 'b',
        name: 'HTTP Request',
        type: 'n8n-nodes-base.httpRequest',
        typeVersion: version,
        position: [200, 0],
        parameters,
        ...(credentials ? { credentials } : {}),
      },
    ],
    connections: { Start: { main: [[{ node: 'HTTP Request', type: 'main', index: 0 }]] } },
  } as unknown as WorkflowDefinition;
}

async function run(def: WorkflowDefinition) {
  const { outcome, outputs } = await runFixture(def, deps);
  return { outcome, out: outputs['HTTP Request'] };
}

describe('HTTP Request v1 in a real template', () => {
  it('CocktailDB → XML: the GET is answered as JSON and the XML node converts it', async () => {
    const { outcome, outputs } = await runFixture(loadFixture('templates/http-v1-cocktaildb-xml.json'), deps);
    expect(outcome.status).toBe('success');
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/api/json/v1/1/random.php' });
    expect(seen[0]?.headers.accept).toBe('application/json,text/*;q=0.99');
    expect(outputs['HTTP Request']).toEqual([{ drinks: [{ idDrink: '11007', strDrink: 'Margarita' }] }]);
    expect(String(outputs.XML?.[0]?.data)).toContain('<strDrink>Margarita</strDrink>');
  });
});

describe('HTTP Request v1/v2 parameters', () => {
  it('key/value rows: repeated query names collect, header names are lowercased, the body is JSON', async () => {
    const { outcome } = await run(
      httpV(1, {
        url: `${base}/echo`,
        requestMethod: 'POST',
        queryParametersUi: {
          parameter: [
            { name: 'tag', value: 'a' },
            { name: 'tag', value: 'b' },
          ],
        },
        headerParametersUi: { parameter: [{ name: 'X-Trace', value: 't1' }] },
        bodyParametersUi: { parameter: [{ name: 'name', value: 'Ada' }] },
      }),
    );
    expect(outcome.status).toBe('success');
    expect(seen[0]?.url).toBe('/echo?tag%5B0%5D=a&tag%5B1%5D=b');
    expect(seen[0]?.headers['x-trace']).toBe('t1');
    expect(seen[0]?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ name: 'Ada' });
  });

  it('JSON parameters, form-urlencoded and useQueryString', async () => {
    await run(
      httpV(2, {
        url: `${base}/echo`,
        requestMethod: 'PUT',
        jsonParameters: true,
        queryParametersJson: '{"ids":[1,2]}',
        bodyParametersJson: '{"x":"1","y":"two words"}',
        options: { bodyContentType: 'form-urlencoded', useQueryString: true },
      }),
    );
    expect(seen[0]?.url).toBe('/echo?ids=1&ids=2');
    expect(seen[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(seen[0]?.body).toBe('x=1&y=two%20words');
  });

  it('invalid JSON parameters fail the node with n8n’s message', async () => {
    const { outcome } = await run(
      httpV(1, {
        url: `${base}/echo`,
        requestMethod: 'POST',
        jsonParameters: true,
        bodyParametersJson: '{nope',
      }),
    );
    expect(outcome.status).toBe('error');
    expect(JSON.stringify(outcome.state.error)).toContain(
      'The data in \\"Body Parameters\\" is no valid JSON',
    );
  });

  it('response formats: split into items, full response, string, file', async () => {
    expect((await run(httpV(1, { url: `${base}/list`, options: { splitIntoItems: true } }))).out).toEqual([
      { a: 1 },
      { a: 2 },
    ]);
    const full = (await run(httpV(1, { url: `${base}/list`, options: { fullResponse: true } }))).out;
    expect(full?.[0]).toMatchObject({ body: [{ a: 1 }, { a: 2 }], statusCode: 200, statusMessage: 'OK' });
    expect((await run(httpV(1, { url: `${base}/text`, responseFormat: 'string' }))).out).toEqual([
      { data: 'plain words' },
    ]);
    const file = await runFixture(
      httpV(2, { url: `${base}/image`, responseFormat: 'file', dataPropertyName: 'img' }),
      deps,
    );
    const binary = file.outcome.state.runData['HTTP Request']?.[0]?.output[0]?.[0]?.binary?.img;
    expect(binary?.mimeType).toBe('image/png');
    expect(Buffer.from(binary?.data ?? '', 'base64')).toEqual(Buffer.from([137, 80, 78, 71]));
  });

  it('a text body with JSON format fails with n8n’s hint; a non-2xx fails unless ignoreResponseCode', async () => {
    const text = await run(httpV(1, { url: `${base}/text` }));
    expect(JSON.stringify(text.outcome.state.error)).toContain(
      'Change \\"Response Format\\" to \\"String\\"',
    );
    const failed = await run(httpV(1, { url: `${base}/status/404` }));
    expect(failed.outcome.status).toBe('error');
    const ignored = await run(httpV(1, { url: `${base}/status/404`, options: { ignoreResponseCode: true } }));
    expect(ignored.out).toEqual([{ error: 'nope' }]);
  });

  it('redirects: a GET follows them, a POST only with followAllRedirects (request’s rule in n8n v1)', async () => {
    expect((await run(httpV(1, { url: `${base}/moved` }))).out).toEqual([{ data: [{ a: 1 }, { a: 2 }] }]);
    const post = await run(
      httpV(1, { url: `${base}/moved`, requestMethod: 'POST', options: { ignoreResponseCode: true } }),
    );
    expect(seen.filter((r) => r.url === '/list')).toHaveLength(1);
    expect(post.outcome.status).toBe('success');
    await run(
      httpV(1, { url: `${base}/moved`, requestMethod: 'POST', options: { followAllRedirects: true } }),
    );
    expect(seen.filter((r) => r.url === '/list')).toHaveLength(2);
  });

  it('v1 basicAuth and v2 generic header credentials are applied from their slots', async () => {
    await run(
      httpV(
        1,
        { url: `${base}/echo`, authentication: 'basicAuth' },
        { httpBasicAuth: { id: 'basic', name: 'b' } },
      ),
    );
    expect(seen[0]?.headers.authorization).toBe(`Basic ${Buffer.from('ada:s3cret').toString('base64')}`);
    await run(
      httpV(
        2,
        { url: `${base}/echo`, authentication: 'genericCredentialType', genericAuthType: 'httpHeaderAuth' },
        { httpHeaderAuth: { id: 'header', name: 'h' } },
      ),
    );
    expect(seen[1]?.headers['x-api-key']).toBe('k-123');
  });

  it('the outbound guard still holds: a private address is refused', async () => {
    const guarded = createOutboundHttp({ allowHosts: [], timeoutMs: 5_000 });
    const { outcome } = await runFixture(httpV(1, { url: 'http://10.0.0.1/' }), { ...deps, http: guarded });
    expect(outcome.status).toBe('error');
    expect(seen).toHaveLength(0);
  });

  it('refused at save, by name: digest/OAuth, predefined credential types, proxies, ignoring TLS errors', () => {
    const limits = { maxWaitMs: 1000, now: new Date() };
    const cases: Array<[number, Record<string, unknown>, string]> = [
      [1, { authentication: 'digestAuth' }, 'parameters.authentication'],
      [
        2,
        { authentication: 'predefinedCredentialType', nodeCredentialType: 'googleApi' },
        'parameters.nodeCredentialType',
      ],
      [1, { allowUnauthorizedCerts: true }, 'parameters.allowUnauthorizedCerts'],
      [2, { options: { proxy: 'http://proxy:3128' } }, 'parameters.options.proxy'],
    ];
    for (const [version, params, path] of cases) {
      const problems = validateWorkflow(
        httpV(version, { url: `${base}/x`, ...params }),
        defaultNodeRegistry,
        limits,
      );
      expect(problems.map((p) => p.path.replace(/^nodes\[1\]\./, ''))).toContain(path);
    }
  });
});
