import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';

// Findings 14 and 23 (generic part): what the edge refuses before any handler or database sees it.
// PostgreSQL cannot store U+0000 in text (every route that stored or looked one up was a 500);
// 1e400 parsed to Infinity and was stored as null; invalid UTF-8 was stored as U+FFFD; integer
// query parameters took 0x10, 1e3, " 1" and 1.0.

type Res = { statusCode: number; headers: Record<string, unknown>; json(): unknown; body: string };

function expect400(res: Res, field?: string) {
  expect(res.statusCode, res.body).toBe(400);
  const body = res.json() as {
    error: boolean;
    code: string;
    requestId: string;
    details: { fields?: Array<{ field: string }> };
  };
  expect(body).toMatchObject({ error: true, code: 'VALIDATION_ERROR', message: expect.any(String) });
  expect(body.requestId).toBe(res.headers['x-request-id']);
  if (field) expect(body.details.fields?.map((f) => f.field)).toContain(field);
}

const key = (name: string) => ({ name, type: 'development', services: ['core'], role: 'Reader' });
const keyJson = (fields: string) => `{"type":"development","services":["core"],"role":"Reader",${fields}}`;

const workflow = (position: string, name = 'edge flow') =>
  `{"name":${JSON.stringify(name)},"nodes":[{"name":"Webhook","type":"webhook","typeVersion":1,` +
  `"position":${position},"parameters":{"path":"edge-${Math.random().toString(36).slice(2)}"}}],"connections":{}}`;

describe.each(await testDialects())('input refused at the edge on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
  });
  afterAll(() => p.close());

  const json = { 'content-type': 'application/json' };

  describe('NUL (U+0000)', () => {
    it('in a JSON string value → 400 naming the field; nothing is stored', async () => {
      const res = await p.request({ method: 'POST', url: '/v1/api-keys', payload: key('a\u0000b') });
      expect400(res, 'body.name');
      const list = await p.request({ method: 'GET', url: '/v1/api-keys?limit=200' });
      expect(list.body).not.toContain('\\u0000');
    });

    it('in a nested value and in a JSON key → 400', async () => {
      const nested = await p.request({
        method: 'POST',
        url: '/api/v1/workflows',
        headers: json,
        payload: workflow('[0,0]').replace('"edge-', '"edge-\\u0000'),
      });
      expect400(nested, 'body.nodes.0.parameters.path');
      const key = await p.request({
        method: 'POST',
        url: '/v1/api-keys',
        headers: json,
        payload: keyJson('"name":"k","x\\u0000":1'),
      });
      expect400(key);
    });

    it('in a path parameter → 400 (was a 500 on PostgreSQL)', async () => {
      // Path parameters too (a negative is allowed where the schema's minimum is).
      for (const type of ['0x3', '3e0', '3.0', '%203']) {
        const res = await p.request({
          method: 'GET',
          url: `/game/Destiny2/${type}/Profile/1?components=Profiles`,
        });
        expect400(res, 'params.membershipType');
      }
      for (const url of ['/v1/api-keys/key%00x', '/api/v1/workflows/wf_%00', '/v1/commerce/blends/b%00'])
        expect400(await p.request({ method: 'GET', url }), 'path');
    });

    it('in an unauthenticated webhook path → 400, before the webhook look-up', async () => {
      for (const method of ['GET', 'POST'] as const)
        expect400(await p.request({ method, url: '/webhook/hook%00path', key: null }), 'path');
    });

    it('in a query value or name → 400', async () => {
      expect400(await p.request({ method: 'GET', url: '/v1/api-keys?name=a%00b' }), 'querystring');
      expect400(await p.request({ method: 'GET', url: '/api/v1/workflows?name%00=x' }), 'querystring');
      expect400(await p.request({ method: 'GET', url: '/webhook/x?q=%00', key: null }), 'querystring');
    });

    it('other text passes: %2500 is the text "%00", and non-ASCII is kept', async () => {
      const res = await p.request({ method: 'POST', url: '/v1/api-keys', payload: key('é ✓ 鍵 %00') });
      expect(res.statusCode).toBe(201);
      expect((res.json() as { name: string }).name).toBe('é ✓ 鍵 %00');
      const found = await p.request({
        method: 'GET',
        url: '/v1/api-keys?name=%C3%A9%20%E2%9C%93%20%E9%8D%B5%20%2500',
      });
      expect(found.statusCode).toBe(200);
      expect((found.json() as { data: unknown[] }).data).toHaveLength(1);
    });
  });

  describe('numbers that overflow to Infinity', () => {
    it('1e400 in a workflow position → 400 at parse time, and no workflow is saved', async () => {
      const before = (await p.request({ method: 'GET', url: '/api/v1/workflows?limit=250' })).json() as {
        data: unknown[];
      };
      for (const position of ['[1e400,0]', '[0,-1e400]']) {
        const res = await p.request({
          method: 'POST',
          url: '/api/v1/workflows',
          headers: json,
          payload: workflow(position, 'infinite'),
        });
        expect400(res, position.startsWith('[1') ? 'body.nodes.0.position.0' : 'body.nodes.0.position.1');
      }
      const after = (await p.request({ method: 'GET', url: '/api/v1/workflows?limit=250' })).json() as {
        data: unknown[];
      };
      expect(after.data.length).toBe(before.data.length);
    });

    it('1e400 in a free-form value the schema cannot bound → 400; large finite numbers pass', async () => {
      const infinite = await p.request({
        method: 'POST',
        url: '/api/v1/workflows',
        headers: json,
        payload: workflow('[0,0]').replace('"parameters":{', '"parameters":{"n":[-1e400],'),
      });
      expect400(infinite, 'body.nodes.0.parameters.n.0');
      const finite = await p.request({
        method: 'POST',
        url: '/api/v1/workflows',
        headers: json,
        payload: workflow('[0,0]').replace('"parameters":{', '"parameters":{"n":[1e300],'),
      });
      expect(finite.statusCode).toBe(201);
    });
  });

  describe('invalid UTF-8', () => {
    it('a JSON body that is not valid UTF-8 → 400, not text holding U+FFFD', async () => {
      for (const bytes of [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
        const payload = Buffer.concat([
          Buffer.from(keyJson('"name":"bad').slice(0, -1)),
          Buffer.from(bytes),
          Buffer.from('"}'),
        ]);
        const res = await p.request({ method: 'POST', url: '/v1/api-keys', headers: json, payload });
        expect400(res);
        expect((res.json() as { message: string }).message).toMatch(/UTF-8/);
      }
      const list = await p.request({ method: 'GET', url: '/v1/api-keys?name=bad%EF%BF%BD' });
      expect((list.json() as { data: unknown[] }).data).toHaveLength(0);
    });

    it('valid multi-byte UTF-8 (and a BOM-less body) is accepted', async () => {
      const payload = Buffer.from(keyJson('"name":"naïve 🚀"'), 'utf8');
      const res = await p.request({ method: 'POST', url: '/v1/api-keys', headers: json, payload });
      expect(res.statusCode).toBe(201);
      expect((res.json() as { name: string }).name).toBe('naïve 🚀');
    });
  });

  describe('integer query parameters', () => {
    it('accept plain decimal digits only', async () => {
      for (const limit of ['0x10', '1e3', '%201', '1%20', '1.0', '+1', '0b1', '', '1_0', 'Infinity']) {
        const res = await p.request({ method: 'GET', url: `/v1/api-keys?limit=${limit}` });
        expect400(res, 'querystring.limit');
      }
      for (const offset of ['0x0', '-0', '1e0']) {
        const res = await p.request({ method: 'GET', url: `/api/v1/workflows?offset=${offset}` });
        expect400(res, 'querystring.offset');
      }
      for (const url of [
        '/v1/api-keys?limit=16',
        '/v1/api-keys?limit=007',
        '/api/v1/workflows?offset=0&limit=5',
      ]) {
        expect((await p.request({ method: 'GET', url })).statusCode).toBe(200);
      }
    });
  });
});
