import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authModule } from '../../src/modules/auth/index.js';
import { gameModule } from '../../src/modules/game/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { authSuite } from '../helpers/auth-suite.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { Browser } from './browser.js';
import { FAKE_API_KEY, FAKE_CLIENT_ID, FakeGamePlatform } from './fake-game-platform.js';

const dialects = await testDialects();

/** A GET sent with its path exactly as written (no dot-segment resolution, unlike fetch or inject). */
function rawGet(url: string, key: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  const path = url.slice(url.indexOf('/', url.indexOf('//') + 2));
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: hostname, port, path, headers: { authorization: `Bearer ${key}` } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
const modules = [authModule, healthModule, gameModule];

describe.each(dialects)('game routes on %s', (dialect) => {
  let p: TestPlatform;
  let fake: FakeGamePlatform;
  beforeAll(async () => {
    fake = await new FakeGamePlatform().start();
    p = await createTestPlatform({ dialect, modules, env: fake.env() });
  });
  afterAll(async () => {
    await p?.close();
    await fake?.stop();
  });

  it('answers the upstream Response, unwrapped', async () => {
    const usage = await p.request({
      method: 'GET',
      url: '/game/App/ApiUsage/1234?start=2026-01-01T00:00:00Z&end=2026-01-02T00:00:00Z',
    });
    expect(usage.statusCode, usage.body).toBe(200);
    expect(usage.json()).toEqual({ applicationId: '1234', apiCalls: [], throttledRequests: [] });
    const seen = fake.requests.at(-1);
    expect(seen?.path).toBe('/Platform/App/ApiUsage/1234/');
    expect(seen?.query.get('start')).toBe('2026-01-01T00:00:00Z');

    const profile = await p.request({
      method: 'GET',
      url: '/game/Destiny2/3/Profile/4611686018467000000?components=Profiles,200',
    });
    expect(profile.statusCode, profile.body).toBe(200);
    expect(profile.json()).toEqual({ membershipType: 3, membershipId: '4611686018467000000', authed: false });
    expect(fake.requests.at(-1)?.query.get('components')).toBe('Profiles,200');
  });

  it('encodes the group name upstream', async () => {
    const res = await p.request({
      method: 'GET',
      url: `/game/GroupV2/Name/${encodeURIComponent('Clan / Ä?#')}/1`,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ detail: { name: 'Clan / Ä?#', groupType: 1 } });
    expect(fake.requests.at(-1)?.path).toBe(`/Platform/GroupV2/Name/${encodeURIComponent('Clan / Ä?#')}/1/`);
  });

  it('a group name cannot rewrite the upstream path: every segment encoded, dot segments refused', async () => {
    // What the fake received, as sent: `/`, `?`, `#`, `%` and `..` inside a name stay in its segment.
    const cases: Array<[string, string]> = [
      ['a/b', 'a%2Fb'],
      ['x?y#z', 'x%3Fy%23z'],
      ['%2F..', '%252F..'],
      ['../App/ApiUsage/1', '..%2FApp%2FApiUsage%2F1'],
      ['...', '...'],
      ['..\\x', '..%5Cx'],
    ];
    for (const [name, sent] of cases) {
      const res = await p.request({ method: 'GET', url: `/game/GroupV2/Name/${encodeURIComponent(name)}/1` });
      expect(res.statusCode, `${name}: ${res.body}`).toBe(200);
      expect(res.json().detail.name).toBe(name);
      expect(fake.requests.at(-1)?.path).toBe(`/Platform/GroupV2/Name/${sent}/1/`);
    }

    // Over a real socket: app.inject would resolve the dot segments before the router sees them.
    const before = fake.requests.length;
    const origin = await p.app.listen({ port: 0, host: '127.0.0.1' });
    for (const name of ['..', '.', '%2E%2E', '%2e', '.%2E']) {
      const res = await rawGet(`${origin}/game/GroupV2/Name/${name}/1`, p.adminKey);
      expect(res.status, `${name}: ${res.body}`).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { fields: [{ field: 'params.groupName' }] },
      });
    }
    // The client refuses dot segments from any caller (e.g. another module), not only this route.
    const client = p.ctx.apis.game?.client;
    if (!client) throw new Error('game module not initialised');
    for (const segment of ['..', '.', '']) {
      await expect(client.get({ path: ['GroupV2', 'Name', segment, 1] })).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
        status: 400,
      });
    }
    expect(fake.requests.length).toBe(before);
  });

  it('validates path and query parameters (400)', async () => {
    const bad = [
      '/game/App/ApiUsage/abc',
      '/game/App/ApiUsage/12?start=yesterday',
      '/game/Halo/Manifest',
      '/game/Destiny2/abc/Profile/123?components=Profiles',
      '/game/Destiny2/3/Profile/12x?components=Profiles',
      '/game/Destiny2/3/Profile/123',
      '/game/Destiny2/3/Profile/123?components=Bogus',
      '/game/Destiny2/3/Profile/123?components=Profiles,,200',
      '/game/Destiny2/3/Profile/123/Character/x/Vendors?components=Vendors',
      '/game/GroupV2/Name/clan/7',
      '/game/oauth/callback?state=x',
      '/game/oauth/start',
      '/game/oauth/start?ticket=short',
    ];
    const before = fake.requests.length;
    for (const url of bad) {
      const res = await p.request({ method: 'GET', url, key: url.includes('/oauth/') ? null : undefined });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
    expect(fake.requests.length).toBe(before);
  });

  it('treats an error code on HTTP 200 as an error: 502 with the upstream code and status', async () => {
    fake.script.push({ errorCode: 1601, errorStatus: 'DestinyAccountNotFound' });
    const res = await p.request({ method: 'GET', url: '/game/Destiny2/3/Profile/123?components=100' });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({
      code: 'UPSTREAM_ERROR',
      details: { upstreamCode: 1601, upstreamStatus: 'DestinyAccountNotFound', httpStatus: 200 },
    });
  });

  it('refuses an upstream answer over 32 MiB with a 502, without holding the rest', async () => {
    fake.script.push({ padBytes: 33 * 1024 * 1024 });
    const res = await p.request({ method: 'GET', url: '/game/GroupV2/Name/clan/1' });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ code: 'UPSTREAM_ERROR', details: { reason: 'content_too_large' } });
  });

  it('waits ThrottleSeconds and retries when the upstream throttles', async () => {
    fake.script.push({ errorCode: 36, errorStatus: 'ThrottleLimitExceededMomentarily', throttleSeconds: 1 });
    const before = fake.apiRequests().length;
    const started = performance.now();
    const res = await p.request({ method: 'GET', url: '/game/GroupV2/Name/clan/1' });
    expect(res.statusCode, res.body).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
    const tries = fake.apiRequests().slice(before);
    expect(tries).toHaveLength(2);
    expect((tries[1]?.at ?? 0) - (tries[0]?.at ?? 0)).toBeGreaterThanOrEqual(990);
  });

  it('caches the manifest by version and refreshes it when the version changes', async () => {
    const count = () => fake.requests.filter((r) => r.path === '/Platform/Destiny2/Manifest/').length;
    const first = await p.request({ method: 'GET', url: '/game/Destiny2/Manifest' });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().version).toBe('1.0.0');
    const again = await p.request({ method: 'GET', url: '/game/Destiny2/Manifest' });
    expect(again.json().version).toBe('1.0.0');
    expect(count()).toBe(1);

    fake.manifestVersion = '2.0.0';
    expect((await p.request({ method: 'GET', url: '/game/Destiny2/Manifest' })).json().version).toBe('1.0.0');
    p.clock.advance(301);
    const changed = await p.request({ method: 'GET', url: '/game/Destiny2/Manifest' });
    expect(changed.json().version).toBe('2.0.0');
    expect(count()).toBe(2);
    const rows = await p.ctx.db.selectFrom('game_manifests').select(['game', 'version']).execute();
    expect(rows).toEqual([{ game: 'Destiny2', version: '2.0.0' }]);

    // The upstream fails: the cached copy is served.
    p.clock.advance(301);
    fake.script.push({ errorCode: 5, errorStatus: 'SystemDisabled', httpStatus: 503 });
    const stale = await p.request({ method: 'GET', url: '/game/Destiny2/Manifest' });
    expect(stale.statusCode).toBe(200);
    expect(stale.json().version).toBe('2.0.0');
  });

  it('sends the API key on every request', () => {
    expect(fake.requests.length).toBeGreaterThan(5);
    for (const r of fake.requests) expect(r.headers['x-api-key']).toBe(FAKE_API_KEY);
  });

  it('authorize gives a one-time browser link; the link sets the binding cookie and redirects with PKCE S256', async () => {
    const res = await p.request({ method: 'GET', url: '/game/oauth/authorize' });
    expect(res.statusCode, res.body).toBe(200);
    const link = new URL(res.json().authorizeUrl);
    expect(link.pathname).toBe('/game/oauth/start');
    expect(link.searchParams.get('ticket')).toMatch(/^[\w-]{43}$/);
    expect(Date.parse(res.json().expiresAt) - p.clock.now().getTime()).toBe(600_000);

    const browser = new Browser(p, fake);
    const start = await browser.step(link.toString());
    expect(start.status, start.body).toBe(302);
    const location = new URL(String(start.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(`${fake.baseUrl}/en/OAuth/Authorize`);
    expect(location.searchParams.get('client_id')).toBe(FAKE_CLIENT_ID);
    expect(location.searchParams.get('response_type')).toBe('code');
    const state = location.searchParams.get('state') ?? '';
    expect(state).toMatch(/^[\w-]+\.\d+\.[\w-]+$/);
    expect(location.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(start.headers['cache-control']).toBe('no-store');
    const [cookie] = browser.setCookies;
    expect(cookie).toMatch(
      new RegExp(
        `^game_oauth_${state.split('.')[0]}=[\\w-]{43}; Path=/game/oauth/callback; Max-Age=600; HttpOnly; SameSite=Lax$`,
      ),
    );
    // The verifier never leaves the platform; only its challenge does.
    const row = await p.ctx.db
      .selectFrom('game_oauth_states')
      .selectAll()
      .where('id', '=', state.split('.')[0] ?? '')
      .executeTakeFirstOrThrow();
    expect(row.code_verifier).toMatch(/^v1\./);
    expect(row.ticket_hash).toBeNull();

    // The link is single-use.
    const again = await new Browser(p, fake).step(link.toString());
    expect(again.status).toBe(400);
    expect(again.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR' });
    expect(again.headers['set-cookie']).toBeUndefined();
  });

  it('documents every game route in the OpenAPI document', async () => {
    const res = await p.request({ method: 'GET', url: '/openapi.json', key: null });
    expect(res.statusCode).toBe(200);
    const paths = Object.keys(res.json().paths);
    for (const path of [
      '/game/App/ApiUsage/{applicationId}',
      '/game/{game}/{membershipType}/Profile/{membershipId}/Character/{characterId}/Vendors',
      '/game/oauth/callback',
      '/game/oauth/start',
    ]) {
      expect(paths).toContain(path);
    }
  });

  describe('routes need a platform key', () => {
    const routes = [
      '/game/App/ApiUsage/1',
      '/game/User/GetMembershipsForCurrentUser',
      '/game/Destiny2/Manifest',
      '/game/Destiny2/3/Profile/1?components=100',
      '/game/Destiny2/3/Profile/1/Character/2/Vendors?components=400',
      '/game/GroupV2/Name/clan/1',
      '/game/oauth/authorize',
    ];
    for (const url of routes) authSuite(() => p, { method: 'GET', url, service: 'game' });
    authSuite(() => p, { method: 'DELETE', url: '/game/oauth/connection', service: 'game' });
  });
});
