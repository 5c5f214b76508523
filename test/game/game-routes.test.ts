import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authModule } from '../../src/modules/auth/index.js';
import { gameModule } from '../../src/modules/game/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { authSuite } from '../helpers/auth-suite.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { FAKE_API_KEY, FAKE_CLIENT_ID, FakeGamePlatform } from './fake-game-platform.js';

const dialects = await testDialects();
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
    ];
    const before = fake.requests.length;
    for (const url of bad) {
      const res = await p.request({ method: 'GET', url, key: url.includes('callback') ? null : undefined });
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

  it('authorize redirects with client_id, response_type=code and a signed state', async () => {
    const res = await p.request({ method: 'GET', url: '/game/oauth/authorize' });
    expect(res.statusCode).toBe(302);
    const location = new URL(String(res.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(`${fake.baseUrl}/en/OAuth/Authorize`);
    expect(location.searchParams.get('client_id')).toBe(FAKE_CLIENT_ID);
    expect(location.searchParams.get('response_type')).toBe('code');
    expect(location.searchParams.get('state')).toMatch(/^[\w-]+\.\d+\.[\w-]+$/);
  });

  it('documents every game route in the OpenAPI document', async () => {
    const res = await p.request({ method: 'GET', url: '/openapi.json', key: null });
    expect(res.statusCode).toBe(200);
    const paths = Object.keys(res.json().paths);
    for (const path of [
      '/game/App/ApiUsage/{applicationId}',
      '/game/{game}/{membershipType}/Profile/{membershipId}/Character/{characterId}/Vendors',
      '/game/oauth/callback',
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
