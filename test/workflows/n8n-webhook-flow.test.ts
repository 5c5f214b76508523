import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createCredential, createWorkflow, settled, workflowPlatform } from './support.js';

/**
 * An n8n-shaped workflow as n8n exports it (n8n's type names, versions and parameter shapes, a
 * JavaScript expression in Set, a Code node, Respond to Webhook with code and headers), imported
 * through the API and run through its webhook.
 */
function n8nExport(path: string, credentialName: string) {
  return {
    name: `n8n ${path}`,
    nodes: [
      {
        id: '1b8e4c2a-0000-4000-8000-000000000001',
        name: 'Webhook',
        type: 'n8n-nodes-base.webhook',
        typeVersion: 2,
        position: [0, 0],
        parameters: {
          httpMethod: 'POST',
          path,
          authentication: 'headerAuth',
          responseMode: 'responseNode',
          options: {},
        },
        credentials: { httpHeaderAuth: { id: null, name: credentialName } },
      },
      {
        id: '1b8e4c2a-0000-4000-8000-000000000002',
        name: 'Edit Fields',
        type: 'n8n-nodes-base.set',
        typeVersion: 3.4,
        position: [200, 0],
        parameters: {
          assignments: {
            assignments: [
              { id: 'a1', name: 'customer', value: '={{ $json.body.name.toTitleCase() }}', type: 'string' },
              { id: 'a2', name: 'count', value: '={{ $json.body.items.length }}', type: 'number' },
            ],
          },
          options: {},
        },
      },
      {
        id: '1b8e4c2a-0000-4000-8000-000000000003',
        name: 'Code',
        type: 'n8n-nodes-base.code',
        typeVersion: 2,
        position: [400, 0],
        parameters: {
          jsCode:
            'const total = $("Webhook").first().json.body.items.reduce((s, i) => s + i.price, 0);\nconsole.log("total", total);\nreturn $input.all().map((item) => ({ json: { ...item.json, total } }));',
        },
      },
      {
        id: '1b8e4c2a-0000-4000-8000-000000000004',
        name: 'Respond to Webhook',
        type: 'n8n-nodes-base.respondToWebhook',
        typeVersion: 1.1,
        position: [600, 0],
        parameters: {
          respondWith: 'json',
          responseBody:
            '={{ JSON.stringify({ greeting: "Hello " + $json.customer, count: $json.count, total: $json.total }) }}',
          options: {
            responseCode: 201,
            responseHeaders: { entries: [{ name: 'X-Order', value: '={{ $json.count }}' }] },
          },
        },
      },
    ],
    connections: {
      Webhook: { main: [[{ node: 'Edit Fields', type: 'main', index: 0 }]] },
      'Edit Fields': { main: [[{ node: 'Code', type: 'main', index: 0 }]] },
      Code: { main: [[{ node: 'Respond to Webhook', type: 'main', index: 0 }]] },
    },
    settings: { executionOrder: 'v1' },
  };
}

describe.each(await testDialects())('an n8n export through its webhook on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    await createCredential(p, 'shop header', 'httpHeaderAuth', { name: 'X-Shop-Key', value: 'k-123' });
    await activate(p, await createWorkflow(p, n8nExport('n8n-orders', 'shop header')));
  });
  afterAll(() => p.close());

  const call = (headers: Record<string, string>) =>
    p.request({
      method: 'POST',
      url: '/webhook/n8n-orders',
      key: null,
      headers: { 'content-type': 'application/json', ...headers },
      payload: { name: 'ada lovelace', items: [{ price: 2.5 }, { price: 4 }] },
    });

  it('runs Set, Code and Respond to Webhook as n8n does', async () => {
    const res = await call({ 'x-shop-key': 'k-123' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['x-order']).toBe('2');
    expect(res.json()).toEqual({ greeting: 'Hello Ada Lovelace', count: 2, total: 6.5 });
  });

  it("checks the webhook's header credential, referred to by name as n8n exports do", async () => {
    expect((await call({})).statusCode).toBe(401);
    expect((await call({ 'x-shop-key': 'wrong' })).statusCode).toBe(403);
  });

  it("keeps the Code node's console output in the execution", async () => {
    await call({ 'x-shop-key': 'k-123' });
    const list = (await p.request({ method: 'GET', url: '/api/v1/executions?limit=1' })).json() as {
      data: Array<{ id: string }>;
    };
    const execution = (await settled(p, list.data[0]?.id ?? '')) as unknown as {
      status: string;
    };
    expect(execution.status).toBe('success');
    const full = (
      await p.request({ method: 'GET', url: `/api/v1/executions/${list.data[0]?.id}?includeData=true` })
    ).json() as { data: { runData?: Record<string, Array<{ logs?: unknown }>>; resultData?: unknown } };
    expect(JSON.stringify(full.data)).toContain('"message":"total 6.5"');
  });

  it('honours options.ipWhitelist: addresses and CIDR ranges may call, others get 403', async () => {
    const body = n8nExport('n8n-allowlist', 'shop header');
    const webhook = body.nodes[0] as { parameters: Record<string, unknown> };
    webhook.parameters.authentication = 'none';
    webhook.parameters.options = { ipWhitelist: '10.0.0.0/8, 192.168.1.7' };
    delete (body.nodes[0] as { credentials?: unknown }).credentials;
    await activate(p, await createWorkflow(p, body));
    const from = (remoteAddress: string) =>
      p.request({
        method: 'POST',
        url: '/webhook/n8n-allowlist',
        key: null,
        remoteAddress,
        headers: { 'content-type': 'application/json' },
        payload: { name: 'ada', items: [] },
      });
    expect((await from('10.20.30.40')).statusCode).toBe(201);
    expect((await from('192.168.1.7')).statusCode).toBe(201);
    const refused = await from('127.0.0.1');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe('IP is not whitelisted to access the webhook!');

    const bad = n8nExport('n8n-allowlist-bad', 'shop header');
    (bad.nodes[0] as { parameters: Record<string, unknown> }).parameters.options = {
      ipWhitelist: '10.0.0.0/8, nope',
    };
    const res = await p.request({ method: 'POST', url: '/api/v1/workflows', payload: bad });
    expect(res.statusCode).toBe(400);
    expect(JSON.stringify(res.json())).toContain("'nope' is not an IP address or CIDR range");
  });

  it('refuses what it cannot honour, naming node, parameter and version', async () => {
    const body = n8nExport('n8n-refused', 'shop header');
    (body.nodes[0] as { parameters: Record<string, unknown> }).parameters.options = { corsMaxAge: 5 };
    (body.nodes[2] as { typeVersion: number }).typeVersion = 9;
    const res = await p.request({ method: 'POST', url: '/api/v1/workflows', payload: body });
    expect(res.statusCode).toBe(400);
    const problems = JSON.stringify(res.json());
    expect(problems).toContain('nodes[0].parameters.options.corsMaxAge');
    expect(problems).toContain("n8n-nodes-base.webhook v2 (node 'Webhook')");
    expect(problems).toMatch(/n8n-nodes-base\.code' has no version 9 here \(supported: 1, 2\)/);
  });
  it('answers with n8n’s response options: headers, an onReceived body, lastNode’s property and content type', async () => {
    const hook = (path: string, parameters: Record<string, unknown>) => ({
      name: `n8n ${path}`,
      nodes: [
        {
          id: `wh-${path}`,
          name: 'Webhook',
          type: 'n8n-nodes-base.webhook',
          typeVersion: 2,
          position: [0, 0],
          parameters: { httpMethod: 'POST', path, ...parameters },
        },
        {
          id: `set-${path}`,
          name: 'Edit Fields',
          type: 'n8n-nodes-base.set',
          typeVersion: 3.4,
          position: [200, 0],
          parameters: {
            assignments: {
              assignments: [{ id: 'a', name: 'doc', value: '=<b>{{ $json.body.name }}</b>', type: 'string' }],
            },
            options: {},
          },
        },
      ],
      connections: { Webhook: { main: [[{ node: 'Edit Fields', type: 'main', index: 0 }]] } },
    });
    const post = (path: string, headers: Record<string, string> = {}) =>
      p.request({
        method: 'POST',
        url: `/webhook/${path}`,
        key: null,
        headers: { 'content-type': 'application/json', ...headers },
        payload: { name: 'ada' },
      });

    await activate(
      p,
      await createWorkflow(
        p,
        hook('n8n-received', {
          options: {
            responseData: 'success',
            responseHeaders: { entries: [{ name: 'X-Source', value: 'n8n' }] },
          },
        }),
      ),
    );
    const received = await post('n8n-received');
    expect(received.statusCode).toBe(200);
    expect(received.body).toBe('success');
    expect(received.headers['x-source']).toBe('n8n');

    await activate(
      p,
      await createWorkflow(
        p,
        hook('n8n-last', {
          responseMode: 'lastNode',
          options: {
            responsePropertyName: 'doc',
            responseContentType: 'text/html',
            responseHeaders: { entries: [{ name: 'Cache-Control', value: 'no-store' }] },
          },
        }),
      ),
    );
    const last = await post('n8n-last');
    expect(last.statusCode).toBe(200);
    expect(last.headers['content-type']).toMatch(/^text\/html/);
    expect(last.headers['cache-control']).toBe('no-store');
    expect(last.body).toBe('<b>ada</b>');

    // ignoreBots: a link previewer's user agent is refused before anything runs; a browser's is not.
    await activate(p, await createWorkflow(p, hook('n8n-bots', { options: { ignoreBots: true } })));
    const bot = await post('n8n-bots', {
      'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
    });
    expect(bot.statusCode).toBe(403);
    expect(bot.headers['www-authenticate']).toBe('Basic realm="Webhook"');
    const person = await post('n8n-bots', {
      'user-agent':
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
    });
    expect(person.statusCode).toBe(200);

    // Read at registration: an expression, or a header the platform owns, is refused at save.
    const bad = hook('n8n-bad-options', {
      options: {
        responseData: '={{ $json.body.name }}',
        responseHeaders: { entries: [{ name: 'Content-Length', value: '5' }] },
      },
    });
    const res = await p.request({ method: 'POST', url: '/api/v1/workflows', payload: bad });
    expect(res.statusCode).toBe(400);
    const problems = JSON.stringify(res.json());
    expect(problems).toContain('parameters.options.responseData');
    expect(problems).toContain("'Content-Length' is not a header the webhook may set");
  });

  it("serves n8n's CORS: allowedOrigins (default *), the preflight with the node's methods, no headers for other origins", async () => {
    const hook = (path: string, parameters: Record<string, unknown>) => ({
      name: `n8n ${path}`,
      nodes: [
        {
          id: `wh-${path}`,
          name: 'Webhook',
          type: 'n8n-nodes-base.webhook',
          typeVersion: 2,
          position: [0, 0],
          parameters: { path, responseMode: 'onReceived', ...parameters },
        },
      ],
      connections: {},
    });
    const call = (method: 'GET' | 'POST' | 'OPTIONS', path: string, headers: Record<string, string>) =>
      p.request({ method, url: `/webhook/${path}`, key: null, headers });

    // Default `*`: any page's origin is echoed; no Origin, no CORS headers (as n8n).
    await activate(p, await createWorkflow(p, hook('n8n-cors-any', { httpMethod: 'POST', options: {} })));
    const any = await call('POST', 'n8n-cors-any', { origin: 'https://shop.example' });
    expect(any.statusCode).toBe(200);
    expect(any.headers['access-control-allow-origin']).toBe('https://shop.example');
    expect(any.headers['access-control-allow-methods']).toBe('OPTIONS, POST');
    expect(any.headers['access-control-allow-credentials']).toBeUndefined();
    expect((await call('POST', 'n8n-cors-any', {})).headers['access-control-allow-origin']).toBeUndefined();

    // A list (n8n's comma-separated text, blanks around names), several methods as a list.
    await activate(
      p,
      await createWorkflow(
        p,
        hook('n8n-cors-list', {
          multipleMethods: true,
          httpMethod: ['GET', 'POST'],
          options: { allowedOrigins: 'http://localhost:5176,https://a.example, https://b.example' },
        }),
      ),
    );
    const preflight = await call('OPTIONS', 'n8n-cors-list', {
      origin: 'https://b.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type, x-api-key',
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://b.example');
    expect(preflight.headers['access-control-allow-methods']).toBe('OPTIONS, GET, POST');
    expect(preflight.headers['access-control-allow-headers']).toBe('content-type, x-api-key');
    expect(preflight.headers['access-control-max-age']).toBe('300');
    const listed = await call('GET', 'n8n-cors-list', { origin: 'http://localhost:5176' });
    expect(listed.headers['access-control-allow-origin']).toBe('http://localhost:5176');
    // Another origin: the call itself is served (CORS is the browser's rule), without CORS headers.
    const other = await call('GET', 'n8n-cors-list', { origin: 'https://evil.example' });
    expect(other.statusCode).toBe(200);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const refused = await call('OPTIONS', 'n8n-cors-list', {
      origin: 'https://evil.example',
      'access-control-request-method': 'GET',
    });
    expect(refused.statusCode).toBe(204);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    // A preflight for a method the webhook does not take, or on no webhook: the platform's errors.
    const wrongMethod = await call('OPTIONS', 'n8n-cors-any', {
      origin: 'https://shop.example',
      'access-control-request-method': 'DELETE',
    });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.json()).toMatchObject({ error: true });
    const nowhere = await call('OPTIONS', 'n8n-cors-nowhere', {
      origin: 'https://shop.example',
      'access-control-request-method': 'POST',
    });
    expect(nowhere.statusCode).toBe(404);
    expect(nowhere.json()).toMatchObject({ error: true, code: 'WEBHOOK_NOT_FOUND' });

    // Fixed at save: an expression has nothing to read when the webhook answers.
    const bad = hook('n8n-cors-bad', { httpMethod: 'POST', options: { allowedOrigins: '={{ $json.x }}' } });
    const res = await p.request({ method: 'POST', url: '/api/v1/workflows', payload: bad });
    expect(res.statusCode).toBe(400);
    expect(JSON.stringify(res.json())).toContain('parameters.options.allowedOrigins');
  });

  it('an IP allow-listed or authenticated webhook sends no CORS headers unless allowedOrigins is set', async () => {
    const hook = (
      path: string,
      parameters: Record<string, unknown>,
      credentials?: Record<string, unknown>,
    ) => ({
      name: `n8n ${path}`,
      nodes: [
        {
          id: `wh-${path}`,
          name: 'Webhook',
          type: 'n8n-nodes-base.webhook',
          typeVersion: 2,
          position: [0, 0],
          parameters: { path, httpMethod: 'POST', responseMode: 'onReceived', ...parameters },
          ...(credentials ? { credentials } : {}),
        },
      ],
      connections: {},
    });
    const call = (method: 'POST' | 'OPTIONS', path: string, headers: Record<string, string>) =>
      p.request({ method, url: `/webhook/${path}`, key: null, remoteAddress: '10.1.2.3', headers });
    const origin = { origin: 'https://attacker.example' };
    const preflight = { ...origin, 'access-control-request-method': 'POST' };
    const shop = { httpHeaderAuth: { id: null, name: 'shop header' } };
    await activate(p, await createWorkflow(p, hook('cors-ip', { options: { ipWhitelist: '10.0.0.0/8' } })));
    await activate(p, await createWorkflow(p, hook('cors-auth', { authentication: 'headerAuth' }, shop)));
    for (const path of ['cors-ip', 'cors-auth']) {
      // The call is served (from inside the allow-list, with the key), but no page may read it.
      const served = await call('POST', path, { ...origin, 'x-shop-key': 'k-123' });
      expect(served.statusCode, path).toBe(200);
      expect(served.headers['access-control-allow-origin'], path).toBeUndefined();
      const asked = await call('OPTIONS', path, preflight);
      expect(asked.statusCode, path).toBe(204);
      expect(asked.headers['access-control-allow-origin'], path).toBeUndefined();
      expect(asked.headers['access-control-allow-methods'], path).toBeUndefined();
    }
    // An explicit choice is honoured, `*` included.
    await activate(
      p,
      await createWorkflow(
        p,
        hook('cors-ip-any', { options: { ipWhitelist: '10.0.0.0/8', allowedOrigins: '*' } }),
      ),
    );
    const chosen = await call('POST', 'cors-ip-any', origin);
    expect(chosen.headers['access-control-allow-origin']).toBe('https://attacker.example');
  });

  it('registers every method of a list even with multipleMethods false, as n8n does with such exports', async () => {
    const body = {
      name: 'n8n list methods',
      nodes: [
        {
          id: 'wh-list',
          name: 'Webhook',
          type: 'n8n-nodes-base.webhook',
          typeVersion: 2,
          position: [0, 0],
          parameters: {
            path: 'n8n-list-methods',
            httpMethod: ['GET', 'PUT'],
            multipleMethods: false,
            options: {},
          },
        },
      ],
      connections: {},
    };
    await activate(p, await createWorkflow(p, body));
    for (const method of ['GET', 'PUT'] as const)
      expect((await p.request({ method, url: '/webhook/n8n-list-methods', key: null })).statusCode).toBe(200);
    expect(
      (await p.request({ method: 'POST', url: '/webhook/n8n-list-methods', key: null })).statusCode,
    ).toBe(405);
  });
});
