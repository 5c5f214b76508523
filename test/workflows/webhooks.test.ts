import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import {
  activate,
  createCredential,
  createWorkflow,
  echoFlow,
  flow,
  settled,
  workflowPlatform,
} from './support.js';

async function executionCount(p: TestPlatform): Promise<number> {
  const res = await p.request({ method: 'GET', url: '/api/v1/executions?limit=250' });
  return (res.json() as { data: unknown[] }).data.length;
}

describe.each(await testDialects())('webhooks on %s', (dialect) => {
  let p: TestPlatform;
  let downstream: Server;
  let downstreamUrl = '';

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    downstream = createServer((req, res) => {
      res.statusCode = req.url?.startsWith('/fail') ? 500 : 200;
      res.setHeader('content-type', 'application/json');
      const delay = req.url?.startsWith('/slow') ? 1_500 : 0;
      setTimeout(() => res.end(JSON.stringify({ upstream: true })), delay);
    });
    await new Promise<void>((r) => downstream.listen(0, '127.0.0.1', r));
    downstreamUrl = `http://127.0.0.1:${(downstream.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await p.close();
    await new Promise((r) => downstream.close(r));
  });

  const hook = (payload: unknown, url: string, headers: Record<string, string> = {}, method = 'POST') =>
    p.app.inject({ method: method as 'POST', url, payload: payload as object, headers });

  describe('response modes', () => {
    it('onReceived answers at once with the execution id, and the execution runs', async () => {
      const id = await createWorkflow(p, echoFlow('received', { responseMode: 'onReceived' }));
      await activate(p, id);
      const res = await hook({ message: 'a' }, '/webhook/received');
      expect(res.statusCode).toBe(200);
      const body = res.json() as { message: string; executionId: string };
      expect(body.message).toBe('Workflow was started');
      const exe = await settled(p, body.executionId);
      expect(exe).toMatchObject({ status: 'success', finished: true, mode: 'webhook', workflowId: id });
    });

    it('onReceived with a configured code and noData answers an empty body', async () => {
      const id = await createWorkflow(
        p,
        echoFlow('received-nodata', {
          responseMode: 'onReceived',
          responseCode: 202,
          responseData: 'noData',
        }),
      );
      await activate(p, id);
      const res = await hook({ message: 'a' }, '/webhook/received-nodata');
      expect(res.statusCode).toBe(202);
      expect(res.body).toBe('');
    });

    it('lastNode answers the first item of the last node', async () => {
      const id = await createWorkflow(p, echoFlow('last'));
      await activate(p, id);
      const res = await hook({ message: 'hello' }, '/webhook/last');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ echoed: 'hello', ok: true });
    });

    it('lastNode with allEntries answers every item', async () => {
      const body = flow('split', [
        {
          name: 'Webhook',
          type: 'webhook',
          parameters: { path: 'all', responseMode: 'lastNode', responseData: 'allEntries' },
        },
        { name: 'Split', type: 'splitItems', parameters: { field: 'body.list', includeOtherFields: false } },
      ]);
      await activate(p, await createWorkflow(p, body));
      const res = await hook({ list: [{ n: 1 }, { n: 2 }, { n: 3 }] }, '/webhook/all');
      expect(res.statusCode).toBe(200);
      const items = res.json() as unknown[];
      expect(items).toHaveLength(3);
    });

    it('responseNode answers what respondToWebhook sets: code, headers, body', async () => {
      const body = flow('respond', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'respond', responseMode: 'responseNode' } },
        {
          name: 'Respond',
          type: 'respondToWebhook',
          parameters: {
            respondWith: 'json',
            responseCode: 201,
            responseHeaders: { 'x-order': '={{ $json.body.id }}' },
            responseBody: { accepted: '={{ $json.body.id }}' },
          },
        },
      ]);
      await activate(p, await createWorkflow(p, body));
      const res = await hook({ id: 'o-1' }, '/webhook/respond');
      expect(res.statusCode).toBe(201);
      expect(res.headers['x-order']).toBe('o-1');
      expect(res.json()).toEqual({ accepted: 'o-1' });
    });

    it('a response header value carrying CR/LF fails the node in the error shape; nothing is injected', async () => {
      const body = flow('respond crlf', [
        {
          name: 'Webhook',
          type: 'webhook',
          parameters: { path: 'respond-crlf', responseMode: 'responseNode' },
        },
        {
          name: 'Respond',
          type: 'respondToWebhook',
          parameters: { responseHeaders: { 'x-custom': '={{ $json.body.h }}' } },
        },
      ]);
      await activate(p, await createWorkflow(p, body));
      const res = await hook({ h: 'x\r\nSet-Cookie: evil=1' }, '/webhook/respond-crlf');
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.json()).toMatchObject({ error: true, requestId: expect.any(String) });
      expect(JSON.stringify(res.json())).toMatch(/not a valid HTTP header/);
      expect(JSON.stringify(res.json())).not.toMatch(/FST_ERR/);
    });
  });

  describe('early answers', () => {
    it('responseNode answers as soon as respondToWebhook runs; the rest runs on', async () => {
      const body = flow('early', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'early', responseMode: 'responseNode' } },
        {
          name: 'Accepted',
          type: 'respondToWebhook',
          parameters: {
            respondWith: 'json',
            responseCode: 202,
            responseBody: { accepted: true, id: '={{ $execution.id }}' },
          },
        },
        { name: 'Slow', type: 'httpRequest', parameters: { method: 'GET', url: `${downstreamUrl}/slow` } },
      ]);
      await activate(p, await createWorkflow(p, body));
      const res = await hook({}, '/webhook/early');
      expect(res.statusCode).toBe(202);
      const { id } = res.json() as { id: string };
      const now = (await p.request({ method: 'GET', url: `/api/v1/executions/${id}` })).json() as {
        status: string;
      };
      expect(now.status).toBe('running');
      const done = await settled(p, id);
      expect(done.status).toBe('success');
    });
  });

  describe('routing', () => {
    it('an unknown path is 404 WEBHOOK_NOT_FOUND in the error shape', async () => {
      const res = await hook({}, '/webhook/nobody-here');
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error: true, code: 'WEBHOOK_NOT_FOUND' });
    });

    it('a registered path with another method is 405 with Allow', async () => {
      await activate(p, await createWorkflow(p, echoFlow('only-post')));
      const res = await p.app.inject({ method: 'GET', url: '/webhook/only-post' });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.json()).toMatchObject({ error: true, code: 'METHOD_NOT_ALLOWED' });
    });

    it('a GET webhook with a nested path and query works', async () => {
      await activate(p, await createWorkflow(p, echoFlow('deep/nested/path', { httpMethod: 'GET' })));
      const res = await p.app.inject({ method: 'GET', url: '/webhook/deep/nested/path?x=1' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ query: { x: '1' }, ok: true });
    });

    it('an inactive workflow does not answer; deactivation releases its path', async () => {
      const id = await createWorkflow(p, echoFlow('toggle'));
      expect((await hook({}, '/webhook/toggle')).statusCode).toBe(404);
      await activate(p, id);
      expect((await hook({ message: 'x' }, '/webhook/toggle')).statusCode).toBe(200);
      await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/deactivate` });
      expect((await hook({}, '/webhook/toggle')).statusCode).toBe(404);
    });
  });

  describe('bodies', () => {
    it('malformed JSON is 400 and creates no execution', async () => {
      await activate(p, await createWorkflow(p, echoFlow('malformed')));
      const before = await executionCount(p);
      const res = await p.app.inject({
        method: 'POST',
        url: '/webhook/malformed',
        payload: '{"a":',
        headers: { 'content-type': 'application/json' },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR' });
      expect(await executionCount(p)).toBe(before);
    });

    it("a body over the node's limit is 413 and creates no execution", async () => {
      await activate(p, await createWorkflow(p, echoFlow('small', { options: { bodyLimitBytes: 1024 } })));
      const before = await executionCount(p);
      const res = await hook({ message: 'x'.repeat(5000) }, '/webhook/small');
      expect(res.statusCode).toBe(413);
      expect(res.json()).toMatchObject({ error: true, code: 'PAYLOAD_TOO_LARGE' });
      expect(await executionCount(p)).toBe(before);
      expect((await hook({ message: 'ok' }, '/webhook/small')).statusCode).toBe(200);
    });

    it('keeps the raw body when asked, and reads forms and text', async () => {
      await activate(p, await createWorkflow(p, echoFlow('raw', { options: { rawBody: true } })));
      const res = await p.app.inject({
        method: 'POST',
        url: '/webhook/raw',
        payload: 'message=form+value&x=1',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(res.statusCode).toBe(200);
      const out = res.json() as { echoed: string; rawBody: string };
      expect(out.echoed).toBe('form value');
      expect(Buffer.from(out.rawBody, 'base64').toString()).toBe('message=form+value&x=1');
    });
  });

  describe('authentication', () => {
    let hmacCred = '';
    beforeAll(async () => {
      hmacCred = await createCredential(p, 'store-secret', 'hmacSecret', { secret: 'shh-its-a-secret' });
      await createCredential(p, 'basic', 'httpBasicAuth', { user: 'ann', password: 'pw' });
      await createCredential(p, 'hdr', 'httpHeaderAuth', { name: 'X-Webhook-Key', value: 'k-123' });
      await createCredential(p, 'qry', 'httpQueryAuth', { name: 'token', value: 'q-456' });
      await activate(
        p,
        await createWorkflow(
          p,
          echoFlow('signed', {
            authentication: 'hmac',
            credential: hmacCred,
            options: { hmacHeader: 'X-Store-Hmac-SHA256' },
          }),
        ),
      );
      await activate(
        p,
        await createWorkflow(p, echoFlow('basic', { authentication: 'basicAuth', credential: 'basic' })),
      );
      await activate(
        p,
        await createWorkflow(p, echoFlow('header', { authentication: 'headerAuth', credential: 'hdr' })),
      );
      await activate(
        p,
        await createWorkflow(p, echoFlow('query', { authentication: 'queryAuth', credential: 'qry' })),
      );
      await activate(p, await createWorkflow(p, echoFlow('keyed', { authentication: 'apiKey' })));
    });

    const sign = (body: string, secret = 'shh-its-a-secret') =>
      createHmac('sha256', secret).update(body).digest('base64');

    it('HMAC: a correct signature of the raw body passes', async () => {
      const raw = JSON.stringify({ message: 'signed' });
      const res = await p.app.inject({
        method: 'POST',
        url: '/webhook/signed',
        payload: raw,
        headers: { 'content-type': 'application/json', 'x-store-hmac-sha256': sign(raw) },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ echoed: 'signed' });
    });

    it('HMAC: missing → 401, wrong secret, wrong length or tampered body → 403, and no execution', async () => {
      const raw = JSON.stringify({ message: 'signed' });
      const before = await executionCount(p);
      const send = (headers: Record<string, string>, payload = raw) =>
        p.app.inject({
          method: 'POST',
          url: '/webhook/signed',
          payload,
          headers: { 'content-type': 'application/json', ...headers },
        });
      expect((await send({})).statusCode).toBe(401);
      expect((await send({ 'x-store-hmac-sha256': sign(raw, 'other') })).statusCode).toBe(403);
      expect((await send({ 'x-store-hmac-sha256': 'c2hvcnQ=' })).statusCode).toBe(403);
      expect(
        (await send({ 'x-store-hmac-sha256': sign(raw) }, raw.replace('signed', 'forged'))).statusCode,
      ).toBe(403);
      const res = await send({});
      expect(res.json()).toMatchObject({ error: true, code: 'UNAUTHORIZED' });
      expect(await executionCount(p)).toBe(before);
    });

    it('basic: missing → 401 with a challenge, wrong → 403, right → 200', async () => {
      const basic = (v: string) => ({ authorization: `Basic ${Buffer.from(v).toString('base64')}` });
      const missing = await hook({ message: 'b' }, '/webhook/basic');
      expect(missing.statusCode).toBe(401);
      expect(missing.headers['www-authenticate']).toContain('Basic');
      expect((await hook({ message: 'b' }, '/webhook/basic', basic('ann:nope'))).statusCode).toBe(403);
      expect((await hook({ message: 'b' }, '/webhook/basic', basic('ann:pw'))).statusCode).toBe(200);
    });

    it('header: missing → 401, wrong → 403, right → 200, and the secret is not stored', async () => {
      expect((await hook({ message: 'h' }, '/webhook/header')).statusCode).toBe(401);
      expect((await hook({ message: 'h' }, '/webhook/header', { 'x-webhook-key': 'k-999' })).statusCode).toBe(
        403,
      );
      const ok = await hook({ message: 'h' }, '/webhook/header', { 'x-webhook-key': 'k-123' });
      expect(ok.statusCode).toBe(200);
      expect(JSON.stringify(ok.json())).not.toContain('k-123');
    });

    it('query: missing → 401, wrong → 403, right → 200', async () => {
      expect((await hook({ message: 'q' }, '/webhook/query')).statusCode).toBe(401);
      expect((await hook({ message: 'q' }, '/webhook/query?token=bad')).statusCode).toBe(403);
      const ok = await hook({ message: 'q' }, '/webhook/query?token=q-456');
      expect(ok.statusCode).toBe(200);
      expect(JSON.stringify(ok.json())).not.toContain('q-456');
    });

    it('platform API key: missing → 401, invalid → 403, without the workflow service → 403, valid → 200', async () => {
      expect((await hook({ message: 'k' }, '/webhook/keyed')).statusCode).toBe(401);
      expect(
        (await hook({ message: 'k' }, '/webhook/keyed', { 'x-api-key': 'PROD_API_nonsense' })).statusCode,
      ).toBe(403);
      const commerceOnly = await p.createKey({
        name: 'c',
        type: 'production',
        role: 'Writer',
        services: ['commerce'],
      });
      expect(
        (await hook({ message: 'k' }, '/webhook/keyed', { 'x-api-key': commerceOnly.key })).statusCode,
      ).toBe(403);
      const ok = await hook({ message: 'k' }, '/webhook/keyed', { 'x-api-key': p.adminKey });
      expect(ok.statusCode).toBe(200);
      expect(JSON.stringify(ok.json())).not.toContain(p.adminKey);
    });
  });

  describe('failures', () => {
    it('a validate node answers 400 listing every problem', async () => {
      const body = flow('validated', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'validated', responseMode: 'lastNode' } },
        {
          name: 'Validate',
          type: 'validate',
          parameters: {
            source: 'body',
            fields: [
              { field: 'email', type: 'email' },
              { field: 'count', type: 'integer' },
            ],
          },
        },
      ]);
      await activate(p, await createWorkflow(p, body));
      const res = await hook({ email: 'nope', count: 'x' }, '/webhook/validated');
      expect(res.statusCode).toBe(400);
      const err = res.json() as {
        code: string;
        details: { fields: Array<{ field: string }>; executionId: string };
      };
      expect(err.code).toBe('VALIDATION_ERROR');
      expect(err.details.fields.map((f) => f.field).sort()).toEqual(['body.count', 'body.email']);
      const exe = await settled(p, err.details.executionId);
      expect(exe.status).toBe('error');
    });

    it('stopAndError answers 422 naming the node; a failing downstream answers 502', async () => {
      const stop = flow('stop', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'stop', responseMode: 'lastNode' } },
        { name: 'Stop', type: 'stopAndError', parameters: { errorMessage: 'no thanks' } },
      ]);
      await activate(p, await createWorkflow(p, stop));
      const res = await hook({}, '/webhook/stop');
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: 'UNPROCESSABLE', details: { node: 'Stop' } });

      const down = flow('down', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'down', responseMode: 'lastNode' } },
        { name: 'Call', type: 'httpRequest', parameters: { method: 'GET', url: `${downstreamUrl}/fail` } },
      ]);
      await activate(p, await createWorkflow(p, down));
      const bad = await hook({}, '/webhook/down');
      expect(bad.statusCode).toBe(502);
      expect(bad.json()).toMatchObject({ code: 'UPSTREAM_ERROR', details: { node: 'Call' } });
    });

    it('an outbound call to a private address is refused unless allowed', async () => {
      const blocked = flow('blocked', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'blocked', responseMode: 'lastNode' } },
        {
          name: 'Call',
          type: 'httpRequest',
          parameters: { method: 'GET', url: 'http://169.254.169.254/latest/meta-data' },
        },
      ]);
      await activate(p, await createWorkflow(p, blocked));
      const res = await hook({}, '/webhook/blocked');
      expect(res.statusCode).toBe(502);
      expect(JSON.stringify(res.json())).toMatch(/may not reach/);
    });
  });

  describe('idempotency', () => {
    it('a repeated delivery with the same dedupe key gets the first answer and creates nothing', async () => {
      await activate(
        p,
        await createWorkflow(p, echoFlow('dedupe', { options: { dedupeKey: '={{ $json.body.id }}' } })),
      );
      const first = await hook({ id: 'd-1', message: 'first' }, '/webhook/dedupe');
      const before = await executionCount(p);
      const again = await hook({ id: 'd-1', message: 'second' }, '/webhook/dedupe');
      expect(again.statusCode).toBe(first.statusCode);
      expect(again.json()).toEqual(first.json());
      expect(await executionCount(p)).toBe(before);
      const other = await hook({ id: 'd-2', message: 'other' }, '/webhook/dedupe');
      expect(other.json()).toMatchObject({ echoed: 'other' });
      expect(await executionCount(p)).toBe(before + 1);
    });

    it('a delivery whose run failed downstream is not replayed: the retry runs again', async () => {
      const body = flow('dedupe-fail', [
        {
          name: 'Webhook',
          type: 'webhook',
          parameters: {
            path: 'dedupe-fail',
            responseMode: 'lastNode',
            options: { dedupeKey: '={{ $json.body.id }}' },
          },
        },
        {
          name: 'Call',
          type: 'httpRequest',
          parameters: { method: 'GET', url: `={{ "${downstreamUrl}" + $json.body.route }}` },
        },
      ]);
      await activate(p, await createWorkflow(p, body));
      const failed = await hook({ id: 'r-1', route: '/fail' }, '/webhook/dedupe-fail');
      expect(failed.statusCode).toBe(502);
      const before = await executionCount(p);
      const retried = await hook({ id: 'r-1', route: '/ok' }, '/webhook/dedupe-fail');
      expect(retried.statusCode).toBe(200);
      expect(await executionCount(p)).toBe(before + 1);
      const replayed = await hook({ id: 'r-1', route: '/fail' }, '/webhook/dedupe-fail');
      expect(replayed.statusCode).toBe(200);
      expect(await executionCount(p)).toBe(before + 1);
    });

    it('concurrent repeats run once', async () => {
      await activate(
        p,
        await createWorkflow(
          p,
          echoFlow('dedupe-burst', {
            responseMode: 'onReceived',
            options: { dedupeKey: '={{ $json.body.id }}' },
          }),
        ),
      );
      const before = await executionCount(p);
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => hook({ id: 'same', message: 'x' }, '/webhook/dedupe-burst')),
      );
      const ids = new Set(answers.map((a) => (a.json() as { executionId: string }).executionId));
      expect(answers.map((a) => `${a.statusCode} ${a.statusCode === 200 ? '' : a.body}`)).toEqual(
        answers.map(() => '200 '),
      );
      expect(ids.size).toBe(1);
      expect(await executionCount(p)).toBe(before + 1);
    });
  });

  describe('wait', () => {
    it('a wait for its resume URL leaves the execution waiting until the URL is called', async () => {
      const body = flow('waiter', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'waiter', responseMode: 'onReceived' } },
        // n8n's resume webhook method and answer, as its exports carry them.
        {
          name: 'Wait',
          type: 'wait',
          parameters: { resume: 'webhook', httpMethod: 'POST', responseMode: 'onReceived' },
        },
        { name: 'Set', type: 'set', parameters: { values: { resumedWith: '={{ $json.body.answer }}' } } },
      ]);
      await activate(p, await createWorkflow(p, body));
      // Another method, or an answer after the run, is refused at save naming the parameter.
      for (const [parameters, path] of [
        [{ resume: 'webhook', httpMethod: 'GET' }, 'parameters.httpMethod'],
        [{ resume: 'webhook', httpMethod: 'POST', responseMode: 'lastNode' }, 'parameters.responseMode'],
      ] as const) {
        const refused = flow('waiter-refused', [
          {
            name: 'Webhook',
            type: 'webhook',
            parameters: { path: 'waiter-refused', responseMode: 'onReceived' },
          },
          { name: 'Wait', type: 'wait', parameters },
        ]);
        const res = await p.request({ method: 'POST', url: '/api/v1/workflows', payload: refused });
        expect(res.statusCode).toBe(400);
        expect(JSON.stringify(res.json())).toContain(path);
      }
      const { executionId } = (await hook({}, '/webhook/waiter')).json() as { executionId: string };
      const waiting = await settled(p, executionId);
      expect(waiting.status).toBe('waiting');
      const resumeUrl = new URL(waiting.resumeUrl as string);
      const resumed = await p.app.inject({
        method: 'POST',
        url: `${resumeUrl.pathname}${resumeUrl.search}`,
        payload: { answer: 42 },
      });
      expect(resumed.statusCode).toBe(200);
      const done = await settled(p, executionId, 20_000, ['waiting']);
      expect(done.status).toBe('success');
      const runData = (
        done.data as {
          resultData: { runData: Record<string, Array<{ data: { main: Array<Array<{ json: unknown }>> } }>> };
        }
      ).resultData.runData;
      expect(runData.Set?.[0]?.data.main[0]?.[0]?.json).toMatchObject({ resumedWith: 42 });
      const again = await p.app.inject({
        method: 'POST',
        url: `${resumeUrl.pathname}${resumeUrl.search}`,
        payload: {},
      });
      expect(again.statusCode).toBe(404);
    });

    it('a timed wait resumes once its time has come (persisted, resumed by the scheduler)', async () => {
      const body = flow('timer', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'timer', responseMode: 'onReceived' } },
        { name: 'Wait', type: 'wait', parameters: { resume: 'timeInterval', amount: 2, unit: 'hours' } },
        { name: 'Set', type: 'set', parameters: { values: { done: true } } },
      ]);
      await activate(p, await createWorkflow(p, body));
      const { executionId } = (await hook({}, '/webhook/timer')).json() as { executionId: string };
      const waiting = await settled(p, executionId);
      expect(waiting.status).toBe('waiting');
      expect(typeof waiting.waitTill).toBe('string');
      expect(waiting.resumeUrl).toBeNull();
      const signature = p.ctx.apis.workflows?.runner.resumeUrl(executionId, 0).split('?')[1];
      const early = await p.app.inject({
        method: 'POST',
        url: `/webhook-waiting/${executionId}?${signature}`,
        payload: {},
      });
      expect(early.statusCode).toBe(409);
      const maintenance = p.ctx.apis.workflows?.maintenance;
      expect(await maintenance?.resumeDue()).toBe(0);
      p.clock.advance(2 * 3600 + 1);
      expect(await maintenance?.resumeDue()).toBeGreaterThanOrEqual(1);
      expect((await settled(p, executionId, 20_000, ['waiting'])).status).toBe('success');
    });
  });
});
