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
  otherAccountKey,
  workflowPlatform,
} from './support.js';

describe.each(await testDialects())(
  'workflow hardening (audit items 10, 16, 17, 21, 23) on %s',
  (dialect) => {
    let p: TestPlatform;
    let other: string;

    beforeAll(async () => {
      p = await workflowPlatform(dialect);
      other = await otherAccountKey(p);
    });
    afterAll(async () => {
      await p.close();
    });

    describe('webhook paths belong to one account', () => {
      const activateAs = (key: string, id: string) =>
        p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate`, payload: {}, key });

      it('another account cannot take a path this account holds, by another method or while it is inactive', async () => {
        const mine = await createWorkflow(p, echoFlow('user-registration'));
        await activate(p, mine);
        const theirs = await createWorkflow(p, echoFlow('user-registration', { httpMethod: 'PUT' }), other);
        const taken = await activateAs(other, theirs);
        expect(taken.statusCode).toBe(409);
        expect(taken.json()).toMatchObject({
          error: true,
          code: 'CONFLICT',
          details: { path: 'user-registration' },
        });

        // Inactive (e.g. while its credentials are set): still this account's path.
        await p.request({ method: 'POST', url: `/api/v1/workflows/${mine}/deactivate`, payload: {} });
        const post = await createWorkflow(p, echoFlow('user-registration'), other);
        expect((await activateAs(other, post)).statusCode).toBe(409);
        const res = await p.app.inject({ method: 'POST', url: '/webhook/user-registration', payload: {} });
        expect(res.statusCode).toBe(404);

        // Once no workflow of the holder declares it, the path is free.
        await p.request({ method: 'DELETE', url: `/api/v1/workflows/${mine}` });
        expect((await activateAs(other, post)).statusCode).toBe(200);
        expect(
          (
            await activateAs(
              p.adminKey,
              await createWorkflow(p, echoFlow('user-registration', { httpMethod: 'GET' })),
            )
          ).statusCode,
        ).toBe(409);
      });
    });

    describe('respondToWebhook answers what the workflow chose', () => {
      const responder = (path: string, responseCode: unknown) =>
        flow(`respond ${path}`, [
          { name: 'Webhook', type: 'webhook', parameters: { path, responseMode: 'responseNode' } },
          {
            name: 'Respond',
            type: 'respondToWebhook',
            parameters: {
              respondWith: 'json',
              responseCode,
              responseBody: { reason: 'out of stock', sku: 'A1' },
            },
          },
        ]);

      it.each([200, 201, 404, 409, 422, 503, 599])(
        'a %i with a JSON body is sent as configured',
        async (code) => {
          await activate(p, await createWorkflow(p, responder(`respond-${code}`, code)));
          const res = await p.app.inject({ method: 'POST', url: `/webhook/respond-${code}`, payload: {} });
          expect(res.statusCode).toBe(code);
          expect(res.json()).toEqual({ reason: 'out of stock', sku: 'A1' });
        },
      );

      it('a 1xx code is refused when the workflow is saved, naming the parameter', async () => {
        for (const code of [100, 103, 199]) {
          const res = await p.request({
            method: 'POST',
            url: '/api/v1/workflows',
            payload: responder('informational', code),
          });
          expect(res.statusCode).toBe(400);
          // The short name is stored as n8n's Respond to Webhook, whose code sits under `options`.
          expect(res.json().details.problems).toContainEqual(
            expect.objectContaining({ path: 'nodes[1].parameters.options.responseCode' }),
          );
        }
        const hook = await p.request({
          method: 'POST',
          url: '/api/v1/workflows',
          payload: echoFlow('early-hints', { responseCode: 103 }),
        });
        expect(hook.statusCode).toBe(400);
        expect(hook.json().details.problems).toContainEqual(
          expect.objectContaining({ path: 'nodes[0].parameters.responseCode' }),
        );
      });
    });

    describe('a workflow is saved only as it reads back', () => {
      it.each([
        ['position', '{"position":[1e400,0]}'],
        ['typeVersion', '{"typeVersion":1e400}'],
        ['a parameter', '{"parameters":{"path":"x","options":{"bodyLimitBytes":1e400}}}'],
      ])(
        'a number JSON cannot carry back (%s = 1e400) is a 400 and nothing is stored',
        async (_what, node) => {
          const before = await p.request({ method: 'GET', url: '/api/v1/workflows?limit=250' });
          const extra = JSON.parse(node.replace('1e400', '0')) as Record<string, unknown>;
          const base = { name: 'Webhook', type: 'webhook', parameters: { path: 'numbers' }, ...extra };
          const text = JSON.stringify({ name: 'numbers', nodes: [base], connections: {} }).replace(
            /("position":\[)0|("typeVersion":)0|("bodyLimitBytes":)0/,
            (_m, a, b, c) => `${a ?? b ?? c}1e400`,
          );
          const res = await p.request({
            method: 'POST',
            url: '/api/v1/workflows',
            payload: text,
            headers: { 'content-type': 'application/json' },
          });
          expect(res.statusCode).toBe(400);
          expect(res.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR' });
          const after = await p.request({ method: 'GET', url: '/api/v1/workflows?limit=250' });
          expect(after.json().data.length).toBe(before.json().data.length);
          for (const w of after.json().data as Array<{ id: string }>) {
            expect((await p.request({ method: 'GET', url: `/api/v1/workflows/${w.id}` })).statusCode).toBe(
              200,
            );
          }
        },
      );
    });

    describe('outbound calls', () => {
      let target: Server;
      let hop: Server;
      const seen: Array<Record<string, unknown>> = [];
      let hopUrl = '';

      beforeAll(async () => {
        target = createServer((req, res) => {
          seen.push({ ...req.headers });
          res.setHeader('content-type', 'application/json');
          res.end('{"landed":true}');
        });
        await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
        const targetPort = (target.address() as AddressInfo).port;
        hop = createServer((_req, res) => {
          res.writeHead(302, { location: `http://localhost:${targetPort}/landed` }).end();
        });
        await new Promise<void>((r) => hop.listen(0, '127.0.0.1', r));
        hopUrl = `http://127.0.0.1:${(hop.address() as AddressInfo).port}/start`;
      });
      afterAll(async () => {
        for (const s of [target, hop]) {
          s.closeAllConnections();
          await new Promise((r) => s.close(r));
        }
      });

      it('a custom credential header (httpHeaderAuth) is not forwarded on a redirect to another origin', async () => {
        const cred = await createCredential(p, 'shop token', 'httpHeaderAuth', {
          name: 'X-Shop-Token',
          value: 'very-secret',
        });
        const body = flow('redirected', [
          { name: 'Webhook', type: 'webhook', parameters: { path: 'redirected', responseMode: 'lastNode' } },
          { name: 'Call', type: 'httpRequest', parameters: { url: hopUrl, credential: cred } },
        ]);
        await activate(p, await createWorkflow(p, body));
        const res = await p.app.inject({ method: 'POST', url: '/webhook/redirected', payload: {} });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({ landed: true });
        expect(seen.at(-1)?.['x-shop-token']).toBeUndefined();
      });

      it('an SSRF refusal names the host, never what it resolves to', async () => {
        const body = flow('internal', [
          { name: 'Webhook', type: 'webhook', parameters: { path: 'internal', responseMode: 'lastNode' } },
          { name: 'Call', type: 'httpRequest', parameters: { url: 'http://localhost:9/' } },
        ]);
        const relaxed = await workflowPlatform(dialect, { OUTBOUND_ALLOW_HOSTS: '' });
        try {
          await activate(relaxed, await createWorkflow(relaxed, body));
          const res = await relaxed.app.inject({ method: 'POST', url: '/webhook/internal', payload: {} });
          expect(res.statusCode).toBe(502);
          const text = JSON.stringify(res.json());
          expect(text).toMatch(/'localhost' is not allowed/);
          expect(text).not.toMatch(/127\.0\.0\.1|::1/);
        } finally {
          await relaxed.close();
        }
      });
    });
  },
);
