import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authModule } from '../../src/modules/auth/index.js';
import { GAME_ENDPOINTS } from '../../src/modules/game/endpoint-table.js';
import { gameModule } from '../../src/modules/game/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { connectAccount } from './connect.js';
import { sampleBody, sampleCall } from './endpoint-samples.js';
import { FAKE_API_KEY, FakeGamePlatform } from './fake-game-platform.js';

const dialects = await testDialects();
const modules = [authModule, healthModule, gameModule];
const MEMBER = '4611686018400000001';

/** Served by the static routes of the first six endpoints (unchanged behaviour). */
const STATIC = new Set([
  'getApplicationApiUsage',
  'getMembershipDataForCurrentUser',
  'getProfile',
  'getVendors',
  'getGroupByName',
]);
/** Served from the manifest cache, not forwarded. */
const CACHED = new Set(['getDestinyManifest', 'getDestinyEntityDefinition']);

const byName = (name: string) => {
  const e = GAME_ENDPOINTS.find((x) => x.name === name);
  if (!e) throw new Error(name);
  return e;
};

/** A request sent with its path exactly as written (no dot-segment resolution, unlike inject). */
function raw(origin: string, method: string, path: string, key: string) {
  const { hostname, port } = new URL(origin);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest(
      { host: hostname, port, path, method, headers: { authorization: `Bearer ${key}` } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe.each(dialects)('every game endpoint on %s', (dialect) => {
  let p: TestPlatform;
  let fake: FakeGamePlatform;
  beforeAll(async () => {
    fake = await new FakeGamePlatform().start();
    p = await createTestPlatform({ dialect, modules, env: fake.env() });
    await connectAccount(p, fake, MEMBER);
  });
  afterAll(async () => {
    await p?.close();
    await fake?.stop();
  });

  it('the table holds all 135 endpoints of bungie-api-ts', () => {
    expect(GAME_ENDPOINTS).toHaveLength(135);
    expect(new Set(GAME_ENDPOINTS.map((e) => `${e.method} ${e.path}`)).size).toBe(135);
  });

  it.each(GAME_ENDPOINTS.filter((e) => !CACHED.has(e.name)).map((e) => [e.name, e] as const))(
    '%s reaches the upstream as asked',
    async (_name, endpoint) => {
      const call = sampleCall(endpoint);
      const before = fake.requests.length;
      const res = await p.request({
        method: endpoint.method,
        url: call.url,
        ...(call.body === undefined ? {} : { payload: call.body as object }),
      });
      expect(res.statusCode, res.body).toBe(200);
      const sent = fake.requests.slice(before);
      expect(sent).toHaveLength(1);
      const [seen] = sent;
      expect(seen?.method).toBe(endpoint.method);
      expect(seen?.path).toBe(call.upstreamPath);
      expect(Object.fromEntries(seen?.query ?? [])).toEqual(
        STATIC.has(endpoint.name) ? expect.any(Object) : call.query,
      );
      expect(seen?.headers['x-api-key']).toBe(FAKE_API_KEY);
      if (call.body === undefined) expect(seen?.body).toBe('');
      else {
        expect(JSON.parse(seen?.body ?? '')).toEqual(call.body);
        expect(seen?.headers['content-type']).toBe('application/json');
      }
      if (!STATIC.has(endpoint.name)) {
        // The connected user's token on every table call (required or attached when connected).
        expect(seen?.headers.authorization).toMatch(/^Bearer at-/);
        // The Response, unwrapped.
        expect(res.json()).toMatchObject({ path: call.upstreamPath, user: MEMBER });
      }
    },
  );

  it('serves manifest definitions by table and hash from the version-keyed cache', async () => {
    const contentFetches = () => fake.requests.filter((r) => r.path.startsWith('/common/')).length;
    const url = (type: string, hash: string | number) => `/game/Destiny2/Manifest/${type}/${hash}/`;
    const first = await p.request({ method: 'GET', url: url('DestinyInventoryItemDefinition', 1363886209) });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toEqual({
      hash: 1363886209,
      displayProperties: { name: 'Gjallarhorn' },
      version: '1.0.0',
    });
    const fetched = contentFetches();
    // Same table, another hash (as a signed int32, as some clients send): no new download.
    const second = await p.request({
      method: 'GET',
      url: url('DestinyInventoryItemDefinition', 3628991658 - 2 ** 32),
    });
    expect(second.json().displayProperties.name).toBe('Graviton Lance');
    expect(contentFetches()).toBe(fetched);

    expect(
      (await p.request({ method: 'GET', url: url('DestinyInventoryItemDefinition', 1) })).statusCode,
    ).toBe(404);
    expect((await p.request({ method: 'GET', url: url('DestinyNopeDefinition', 1) })).statusCode).toBe(404);
    expect((await p.request({ method: 'GET', url: url('Bogus', 1) })).statusCode).toBe(400);
    expect((await p.request({ method: 'GET', url: url('DestinyClassDefinition', 'x') })).statusCode).toBe(
      400,
    );

    // A new upstream version: a new table once the manifest is checked again.
    fake.manifestVersion = '2.0.0';
    p.clock.advance(301);
    const changed = await p.request({
      method: 'GET',
      url: url('DestinyInventoryItemDefinition', 1363886209),
    });
    expect(changed.json().version).toBe('2.0.0');
    expect(contentFetches()).toBe(fetched + 1);
  });

  it('refuses a path parameter with / or .. (400) without calling upstream', async () => {
    const before = fake.requests.length;
    // (inject resolves `..` and `%2E%2E` segments itself; the socket case below sends them as written.)
    for (const value of ['a%2Fb', 'a..b', 'a%5Cb', '%2E%2Ex']) {
      const res = await p.request({ method: 'GET', url: `/game/Content/GetContentType/${value}/` });
      expect(res.statusCode, `${value}: ${res.body}`).toBe(400);
      expect(res.json()).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { fields: [{ field: 'params.type' }] },
      });
    }
    // Over a real socket: the dot segments as written reach the router.
    const origin = await p.app.listen({ port: 0, host: '127.0.0.1' });
    for (const value of ['..', '.', '%2E%2E', '%2e']) {
      const res = await raw(origin, 'GET', `/game/Content/GetContentType/${value}/`, p.adminKey);
      expect(res.status, `${value}: ${res.body}`).toBe(400);
    }
    // A dot segment where the table has a literal matches no endpoint.
    expect((await raw(origin, 'GET', '/game/Destiny2/../App/FirstParty/', p.adminKey)).status).toBe(404);
    expect(fake.requests.length).toBe(before);
  });

  it('refuses bad input with 4xx and calls nothing upstream', async () => {
    const transfer = byName('transferItem');
    const good = sampleBody(transfer.body ?? '') as Record<string, unknown>;
    const before = fake.requests.length;
    const cases: Array<[string, string, unknown, number, string]> = [
      [
        'POST',
        '/game/Destiny2/Actions/Items/TransferItem/',
        { ...good, itemReferenceHash: 'x' },
        400,
        'body.itemReferenceHash',
      ],
      ['POST', '/game/Destiny2/Actions/Items/TransferItem/', { ...good, extra: 1 }, 400, 'body'],
      ['POST', '/game/Destiny2/Actions/Items/TransferItem/', [1, 2], 400, 'body'],
      ['POST', '/game/Destiny2/Actions/Items/TransferItem/', undefined, 400, 'body'],
      ['POST', '/game/Social/Friends/Add/123/', { a: 1 }, 400, 'body'],
      [
        'GET',
        '/game/Destiny2/3/Profile/123/LinkedProfiles/?getAllMemberships=maybe',
        undefined,
        400,
        'querystring.getAllMemberships',
      ],
      ['GET', '/game/Destiny2/3/Profile/123/LinkedProfiles/?other=1', undefined, 400, 'querystring.other'],
      ['GET', '/game/Destiny2/99/Profile/123/LinkedProfiles/', undefined, 400, 'params.membershipType'],
      ['GET', '/game/CommunityContent/Get/9/0/1/', undefined, 400, 'params.sort'],
      ['GET', '/game/CommunityContent/Get/0/0/x/', undefined, 400, 'params.page'],
    ];
    for (const [method, url, body, status, field] of cases) {
      const res = await p.request({
        method: method as 'GET' | 'POST',
        url,
        ...(body === undefined ? {} : { payload: body as object }),
      });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(status);
      expect(res.json().details.fields[0].field).toBe(field);
    }
    const unknown = await p.request({ method: 'GET', url: '/game/Destiny2/NoSuchThing/' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('ROUTE_NOT_FOUND');
    const wrongMethod = await p.request({ method: 'GET', url: '/game/Destiny2/Actions/Items/TransferItem/' });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers.allow).toBe('POST');
    expect(fake.requests.length).toBe(before);
  });

  it('a throttled upstream answers 503 with Retry-After, after one call when the wait is long', async () => {
    fake.script.push({ errorCode: 31, errorStatus: 'ThrottleLimitExceeded', throttleSeconds: 60 });
    const before = fake.apiRequests().length;
    const res = await p.request({ method: 'GET', url: '/game/Destiny2/Milestones/' });
    expect(res.statusCode, res.body).toBe(503);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.json().details).toMatchObject({ upstreamCode: 31 });
    expect(fake.apiRequests().length - before).toBe(1);
  });

  it('upstream error codes map as on the first endpoints (502 with the upstream code)', async () => {
    fake.script.push({ errorCode: 1623, errorStatus: 'DestinyItemNotFound' });
    const call = sampleCall(byName('equipItem'));
    const res = await p.request({ method: 'POST', url: call.url, payload: call.body as object });
    expect(res.statusCode).toBe(502);
    expect(res.json().details).toMatchObject({ upstreamCode: 1623, upstreamStatus: 'DestinyItemNotFound' });
  });

  describe('who may call what', () => {
    it('reads need game:read; item actions and clan admin game:write', async () => {
      const reader = (
        await p.createKey({ name: 'r', type: 'development', services: ['game'], role: 'Reader' })
      ).key;
      const read = sampleCall(byName('getPublicMilestones'));
      expect((await p.request({ method: 'GET', url: read.url, key: reader })).statusCode).toBe(200);
      // A POST that only searches is a read.
      const search = sampleCall(byName('searchDestinyPlayerByBungieName'));
      const searched = await p.request({
        method: 'POST',
        url: search.url,
        payload: search.body as object,
        key: reader,
      });
      expect(searched.statusCode, searched.body).toBe(200);
      const before = fake.requests.length;
      for (const name of ['transferItem', 'kickMember', 'getPendingMemberships']) {
        const e = byName(name);
        const call = sampleCall(e);
        const res = await p.request({
          method: e.method,
          url: call.url,
          key: reader,
          ...(call.body === undefined ? {} : { payload: call.body as object }),
        });
        expect(res.statusCode, `${name}: ${res.body}`).toBe(403);
        expect(res.json().details.requiredScope).toBe('game:write');
      }
      expect(fake.requests.length).toBe(before);
    });

    it("a customer token acts only with its own customer's connection; without one 401 before any call", async () => {
      const mint = async (customerId: string) => {
        const res = await p.request({
          method: 'POST',
          url: '/v1/auth/tokens',
          payload: { customerId, scopes: ['game:read', 'game:write'] },
        });
        expect(res.statusCode, res.body).toBe(201);
        return res.json().token as string;
      };
      await connectAccount(p, fake, '4611686018400000077', 'shopper_a');
      const a = await mint('shopper_a');
      const b = await mint('shopper_b');
      const transfer = sampleCall(byName('transferItem'));
      const done = await p.request({
        method: 'POST',
        url: transfer.url,
        payload: transfer.body as object,
        key: a,
      });
      expect(done.statusCode, done.body).toBe(200);
      expect(done.json().user).toBe('4611686018400000077');

      const before = fake.apiRequests().length;
      const refused = await p.request({
        method: 'POST',
        url: transfer.url,
        payload: transfer.body as object,
        key: b,
      });
      expect(refused.statusCode).toBe(401);
      expect(refused.json().code).toBe('GAME_AUTH_REQUIRED');
      // An optional-token read goes anonymous for b: no one else's token.
      const read = await p.request({ method: 'GET', url: '/game/Destiny2/Milestones/', key: b });
      expect(read.json().user).toBeNull();
      expect(fake.apiRequests().length - before).toBe(1);
      // The application's own usage is not a customer's.
      expect(
        (await p.request({ method: 'GET', url: sampleCall(byName('getBungieApplications')).url, key: a }))
          .statusCode,
      ).toBe(403);
    });
  });
});
