import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../../../../core/http/outbound.js';
import { ctx, jsonOf, testDeps, trigger, webhookNode, workflow } from '../../../engine/testing.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

let server: Server;
let base: string;
const seen: Array<{ method: string; url: string; auth: string | null; body: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        auth: req.headers.authorization ?? null,
        body,
      });
      if (req.url?.startsWith('/fail')) {
        res.writeHead(500).end('boom');
        return;
      }
      if (req.url?.startsWith('/list')) {
        res.setHeader('content-type', 'application/json').end('[{"id":1},{"id":2}]');
        return;
      }
      res
        .setHeader('content-type', 'application/json')
        .end(JSON.stringify({ ok: true, got: body ? JSON.parse(body) : null }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const engineWith = (allowHosts: string[]) =>
  new WorkflowEngine(
    testDeps({ http: createOutboundHttp({ allowHosts, timeoutMs: 5_000 }) }),
    defaultNodeRegistry,
  );

const def = (parameters: Record<string, unknown>) =>
  workflow([webhookNode, { name: 'Call', type: 'httpRequest', parameters }], [['Webhook', 'Call']]);

describe('httpRequest', () => {
  it('sends the item as JSON with query and bearer credential, and outputs the response', async () => {
    const out = await engineWith(['127.0.0.1']).run(
      def({
        method: 'POST',
        url: `=${base}/orders/{{ $json.body.name }}`,
        query: { page: 2 },
        body: { name: '={{ $json.body.name }}' },
        credential: 'cred_1',
      }),
      trigger(),
      ctx,
    );
    expect(out.status).toBe('success');
    expect(jsonOf(out.state, 'Call')).toEqual([{ ok: true, got: { name: 'Ada' } }]);
    expect(seen.at(-1)).toMatchObject({ method: 'POST', url: '/orders/Ada?page=2', auth: 'Bearer s3cret' });
  });

  it('turns a JSON array into items', async () => {
    const out = await engineWith(['127.0.0.1']).run(def({ url: `${base}/list` }), trigger(), ctx);
    expect(jsonOf(out.state, 'Call')).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('fails on a non-2xx status unless neverError, with fullResponse', async () => {
    const failed = await engineWith(['127.0.0.1']).run(def({ url: `${base}/fail` }), trigger(), ctx);
    expect(failed.state.error).toEqual({
      message: 'Request failed with status 500',
      description: 'boom',
      node: 'Call',
    });
    const passed = await engineWith(['127.0.0.1']).run(
      def({ url: `${base}/fail`, neverError: true, fullResponse: true, responseFormat: 'text' }),
      trigger(),
      ctx,
    );
    expect(jsonOf(passed.state, 'Call')[0]).toMatchObject({ statusCode: 500, body: 'boom' });
  });

  it('is refused by the outbound guard when the host is not allowed', async () => {
    const out = await engineWith([]).run(def({ url: `${base}/list` }), trigger(), ctx);
    expect(out.status).toBe('error');
    expect(out.state.error?.message).toMatch(/may not reach/);
  });

  it('fails on an unknown credential', async () => {
    const out = await engineWith(['127.0.0.1']).run(
      def({ url: `${base}/list`, credential: 'nope' }),
      trigger(),
      ctx,
    );
    expect(out.state.error?.message).toMatch(/Credential 'nope' not found/);
  });
});
