import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authModule } from '../../src/modules/auth/index.js';
import { gameModule } from '../../src/modules/game/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { connectAccount } from './connect.js';
import { FakeGamePlatform } from './fake-game-platform.js';

const dialects = await testDialects();
const modules = [authModule, healthModule, gameModule];
const MEMBERSHIPS = '/game/User/GetMembershipsForCurrentUser';

describe.each(dialects)('game OAuth on %s', (dialect) => {
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
  beforeEach(async () => {
    fake.refuseRefresh = false;
    fake.refreshDelayMs = 0;
    fake.accessExpiresIn = 3600;
    await p.request({ method: 'DELETE', url: '/game/oauth/connection' });
  });

  const memberships = (key?: string) =>
    p.request({ method: 'GET', url: MEMBERSHIPS, ...(key ? { key } : {}) });

  it('without a connected account, user routes answer 401 GAME_AUTH_REQUIRED with the authorize URL', async () => {
    for (const url of [MEMBERSHIPS, '/game/Destiny2/3/Profile/1/Character/2/Vendors?components=Vendors']) {
      const res = await p.request({ method: 'GET', url });
      expect(res.statusCode, res.body).toBe(401);
      const body = res.json();
      expect(body.code).toBe('GAME_AUTH_REQUIRED');
      expect(body.details.authorizeUrl).toContain(`${fake.baseUrl}/en/OAuth/Authorize?`);
      expect(body.details.authorizeUrl).toContain('state=');
      expect(body.details.connectUrl).toMatch(/\/game\/oauth\/authorize$/);
    }
  });

  it('connects: the callback exchanges the code and stores the tokens encrypted', async () => {
    await connectAccount(p, fake, '9001');
    const token = fake.requests.filter((r) => r.path.endsWith('/OAuth/Token/')).at(-1);
    expect(token?.headers.authorization).toMatch(/^Basic /);
    expect(new URLSearchParams(token?.body).get('grant_type')).toBe('authorization_code');

    const row = await p.ctx.db.selectFrom('game_connections').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      account_id: p.accountId,
      customer_id: '',
      membership_id: '9001',
      status: 'active',
    });
    const stored = JSON.stringify(row);
    for (const secret of fake.issued) expect(stored).not.toContain(secret);
    expect(row.access_token).toMatch(/^v1\./);
    expect(row.refresh_token).toMatch(/^v1\./);
    expect(Date.parse(row.access_expires_at) - p.clock.now().getTime()).toBe(3600_000);

    const res = await memberships();
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ bungieNetUser: { membershipId: '9001' }, destinyMemberships: [] });
    const profile = await p.request({ method: 'GET', url: '/game/Destiny2/3/Profile/1?components=100' });
    expect(profile.json().authed).toBe(true);
    const vendors = await p.request({
      method: 'GET',
      url: '/game/Destiny2/3/Profile/1/Character/2/Vendors?components=Vendors,VendorSales&filter=0',
    });
    expect(vendors.statusCode, vendors.body).toBe(200);
    expect(vendors.json().characterId).toBe('2');
  });

  it('refuses a replayed, altered or expired state (400)', async () => {
    const { state } = await connectAccount(p, fake, '9002');
    const callback = (s: string) =>
      p.request({
        method: 'GET',
        url: `/game/oauth/callback?code=${fake.issueCode('9002')}&state=${encodeURIComponent(s)}`,
        key: null,
      });
    const replay = await callback(state);
    expect(replay.statusCode).toBe(400);
    expect(replay.json().message).toMatch(/already used/);

    const fresh = new URL(
      String((await p.request({ method: 'GET', url: '/game/oauth/authorize' })).headers.location),
    ).searchParams.get('state') as string;
    const [nonce, exp, sig] = fresh.split('.');
    expect((await callback(`${nonce}.${Number(exp) + 60}.${sig}`)).statusCode).toBe(400);
    expect((await callback(`${nonce}x.${exp}.${sig}`)).statusCode).toBe(400);
    p.clock.advance(601);
    const expired = await callback(fresh);
    expect(expired.statusCode).toBe(400);
    expect(expired.json().message).toMatch(/expired/);
  });

  it('an upstream refusal of the code is a 502', async () => {
    const start = await p.request({ method: 'GET', url: '/game/oauth/authorize' });
    const state = new URL(String(start.headers.location)).searchParams.get('state') as string;
    const res = await p.request({
      method: 'GET',
      url: `/game/oauth/callback?code=not-issued&state=${encodeURIComponent(state)}`,
      key: null,
    });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({
      code: 'UPSTREAM_ERROR',
      details: { httpStatus: 400, oauthError: 'invalid_grant' },
    });
  });

  it('after an auth error, concurrent requests cause one renewal and all succeed', async () => {
    await connectAccount(p, fake, '9003');
    fake.expireAccessTokens();
    fake.refreshDelayMs = 100;
    const before = fake.refreshes;
    const answers = await Promise.all(Array.from({ length: 10 }, () => memberships()));
    for (const res of answers) expect(res.statusCode, res.body).toBe(200);
    expect(fake.refreshes - before).toBe(1);
    const row = await p.ctx.db.selectFrom('game_connections').selectAll().executeTakeFirstOrThrow();
    expect(row.token_version).toBe(1);
  });

  it('renews before the access token expires, once under concurrency', async () => {
    await connectAccount(p, fake, '9004');
    fake.refreshDelayMs = 100;
    p.clock.advance(3600 - 30);
    const before = fake.refreshes;
    const apiBefore = fake.apiRequests().length;
    const answers = await Promise.all(Array.from({ length: 8 }, () => memberships()));
    for (const res of answers) expect(res.statusCode, res.body).toBe(200);
    expect(fake.refreshes - before).toBe(1);
    // No request went out with the old token: renewal happened first.
    expect(fake.apiRequests().length - apiBefore).toBe(8);
  });

  it('a refused renewal marks the connection expired: 401 until reconnected', async () => {
    await connectAccount(p, fake, '9005');
    fake.expireAccessTokens();
    fake.refuseRefresh = true;
    const res = await memberships();
    expect(res.statusCode, res.body).toBe(401);
    expect(res.json().code).toBe('GAME_AUTH_REQUIRED');
    expect(res.json().details.authorizeUrl).toContain('state=');
    const row = await p.ctx.db.selectFrom('game_connections').selectAll().executeTakeFirstOrThrow();
    expect(row.status).toBe('expired');

    const refreshes = fake.refreshes;
    const seen = fake.requests.length;
    expect((await memberships()).statusCode).toBe(401);
    expect(fake.refreshes).toBe(refreshes);
    expect(fake.requests.length).toBe(seen);
    // Public data still works anonymously.
    const profile = await p.request({ method: 'GET', url: '/game/Destiny2/3/Profile/1?components=100' });
    expect(profile.json().authed).toBe(false);

    fake.refuseRefresh = false;
    await connectAccount(p, fake, '9005');
    expect((await memberships()).statusCode).toBe(200);
  });

  it('the connection belongs to the principal: a customer token has its own', async () => {
    await connectAccount(p, fake, '9006');
    const minted = await p.request({
      method: 'POST',
      url: '/v1/auth/tokens',
      payload: { customerId: 'cust_1', scopes: ['game:read', 'game:delete'] },
    });
    expect(minted.statusCode, minted.body).toBe(201);
    const token = minted.json().token as string;
    expect((await memberships(token)).statusCode).toBe(401);
    await connectAccount(p, fake, '7777', token);
    expect((await memberships(token)).json().bungieNetUser.membershipId).toBe('7777');
    expect((await memberships()).json().bungieNetUser.membershipId).toBe('9006');
    const gone = await p.request({ method: 'DELETE', url: '/game/oauth/connection', key: token });
    expect(gone.statusCode).toBe(204);
    expect((await memberships(token)).statusCode).toBe(401);
    expect((await memberships()).statusCode).toBe(200);
  });

  it('DELETE /game/oauth/connection disconnects', async () => {
    await connectAccount(p, fake, '9007');
    expect((await memberships()).statusCode).toBe(200);
    const res = await p.request({ method: 'DELETE', url: '/game/oauth/connection' });
    expect(res.statusCode).toBe(204);
    expect((await memberships()).statusCode).toBe(401);
    const rows = await p.ctx.db.selectFrom('game_connections').selectAll().execute();
    expect(rows).toHaveLength(0);
  });
});
