import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authModule } from '../../src/modules/auth/index.js';
import { gameModule } from '../../src/modules/game/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { otherAccountKey } from '../helpers/accounts.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { Browser } from './browser.js';
import {
  complete,
  completionOf,
  connectAccount,
  connectLink,
  RETURN_URL,
  SESSION_SECRET,
  sessionBindingOf,
} from './connect.js';
import { FAKE_CLIENT_ID, FAKE_CLIENT_SECRET, FakeGamePlatform } from './fake-game-platform.js';

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
    // Every test starts with no connection, the customers' included.
    await p.ctx.db.deleteFrom('game_connections').execute();
  });

  const memberships = (key?: string) =>
    p.request({ method: 'GET', url: MEMBERSHIPS, ...(key ? { key } : {}) });

  const flowCount = async () =>
    (await p.ctx.db.selectFrom('game_oauth_states').select('id').execute()).length;
  const tokenFor = async (customerId: string) => {
    const minted = await p.request({
      method: 'POST',
      url: '/v1/auth/tokens',
      payload: { customerId, scopes: ['game:read', 'game:delete'] },
    });
    expect(minted.statusCode, minted.body).toBe(201);
    return minted.json().token as string;
  };

  it('without a connected account, user routes answer 401 GAME_AUTH_REQUIRED naming the authorize route, with no link', async () => {
    const flows = await flowCount();
    for (const url of [MEMBERSHIPS, '/game/Destiny2/3/Profile/1/Character/2/Vendors?components=Vendors']) {
      const res = await p.request({ method: 'GET', url });
      expect(res.statusCode, res.body).toBe(401);
      const body = res.json();
      expect(body.code).toBe('GAME_AUTH_REQUIRED');
      // An error answer mints no flow and no bearer link; the integration starts one when its user is there.
      expect(body.details.authorizeUrl).toBeUndefined();
      expect(body.details.connectUrl).toMatch(/\/game\/oauth\/authorize$/);
    }
    expect(await flowCount()).toBe(flows);
  });

  it('a customer token may not start a connection: 403, no flow, and its 401s carry no link', async () => {
    const token = await tokenFor('shopper_1');
    const flows = await flowCount();
    for (const url of ['/game/oauth/authorize', '/game/oauth/authorize?customerId=shopper_1']) {
      const res = await p.request({ method: 'GET', url, key: token });
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json()).toMatchObject({ error: true, code: 'FORBIDDEN', requestId: expect.any(String) });
    }
    const denied = await memberships(token);
    expect(denied.statusCode, denied.body).toBe(401);
    expect(denied.json().code).toBe('GAME_AUTH_REQUIRED');
    expect(denied.json().details.authorizeUrl).toBeUndefined();
    expect(denied.json().message).toMatch(/integration must start the connection/);
    expect(JSON.stringify(denied.json())).not.toContain('/game/oauth/start');
    expect(await flowCount()).toBe(flows);
  });

  it("a key starts a customer's connection with customerId; only that customer's token uses it", async () => {
    const [c1, c2] = [await tokenFor('c1'), await tokenFor('c2')];
    const link = await connectLink(p, 'c1');
    const ticket = new URL(link).searchParams.get('ticket') ?? '';
    const flow = await p.ctx.db
      .selectFrom('game_oauth_states')
      .select(['account_id', 'customer_id'])
      .where('ticket_hash', '=', createHash('sha256').update(ticket).digest('base64url'))
      .executeTakeFirstOrThrow();
    expect(flow).toEqual({ account_id: p.accountId, customer_id: 'c1' });

    // The integration sends its signed-in customer's browser to the link; the browser comes back to
    // the integration, which completes with the secret of that customer's session.
    const browser = new Browser(p, fake, '8101');
    const done = await complete(p, completionOf(await browser.open(link)), SESSION_SECRET);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().membershipId).toBe('8101');
    const conn = await p.ctx.db
      .selectFrom('game_connections')
      .select(['account_id', 'customer_id', 'membership_id'])
      .where('customer_id', '=', 'c1')
      .executeTakeFirstOrThrow();
    expect(conn).toEqual({ account_id: p.accountId, customer_id: 'c1', membership_id: '8101' });

    const mine = await memberships(c1);
    expect(mine.statusCode, mine.body).toBe(200);
    expect(mine.json().bungieNetUser.membershipId).toBe('8101');
    const vendors = await p.request({
      method: 'GET',
      url: '/game/Destiny2/3/Profile/1/Character/2/Vendors?components=Vendors',
      key: c1,
    });
    expect(vendors.statusCode, vendors.body).toBe(200);

    const other = await memberships(c2);
    expect(other.statusCode, other.body).toBe(401);
    expect(other.json().code).toBe('GAME_AUTH_REQUIRED');
    expect(other.json().details.authorizeUrl).toBeUndefined();
    // The key's own account connection is another one still.
    expect((await memberships()).statusCode).toBe(401);
  });

  it("a customer's link forwarded to a victim connects nobody: only the session that asked can complete it", async () => {
    const attackerSecret = 'attacker-session';
    const link = await connectLink(p, 'mallory', attackerSecret);
    // The victim opens the forwarded link and signs in at the game platform as themselves…
    const victim = new Browser(p, fake, '8201');
    const back = await victim.open(link);
    const completion = completionOf(back);
    expect(
      await p.ctx.db
        .selectFrom('game_connections')
        .where('customer_id', '=', 'mallory')
        .selectAll()
        .execute(),
    ).toEqual([]);
    // …and lands on the integration in their own session, whose secret is not the attacker's.
    const refused = await complete(p, completion, 'victim-session');
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'FORBIDDEN', details: { reason: 'session_mismatch' } });
    // The grant is gone: the attacker's own session cannot complete it afterwards.
    const late = await complete(p, completion, attackerSecret);
    expect(late.statusCode, late.body).toBe(404);
    expect(
      await p.ctx.db
        .selectFrom('game_connections')
        .where('customer_id', '=', 'mallory')
        .selectAll()
        .execute(),
    ).toEqual([]);
  });

  it("a customer's link must be session-bound; a completion is one account's, once, within ten minutes", async () => {
    const flows = await flowCount();
    const binding = sessionBindingOf(SESSION_SECRET);
    for (const query of [
      'customerId=c9',
      `customerId=c9&sessionBinding=${binding}`,
      `customerId=c9&returnUrl=${encodeURIComponent(RETURN_URL)}`,
      `customerId=c9&sessionBinding=${binding.toUpperCase()}&returnUrl=${encodeURIComponent(RETURN_URL)}`,
      `customerId=c9&sessionBinding=${binding}&returnUrl=javascript:alert(1)`,
    ]) {
      const res = await p.request({ method: 'GET', url: `/game/oauth/authorize?${query}` });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
    expect(await flowCount()).toBe(flows);

    const completion = completionOf(await new Browser(p, fake, '8301').open(await connectLink(p, 'c9')));
    // Another account's key does not see it.
    const other = await otherAccountKey(p);
    expect((await complete(p, completion, SESSION_SECRET, other)).statusCode).toBe(404);
    for (const body of [
      { completion },
      { completion: 'gcomp_x', sessionSecret: 's' },
      { completion, sessionSecret: '' },
    ]) {
      const res = await p.request({ method: 'POST', url: '/game/oauth/complete', payload: body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
    // Only the integration's keys complete, with write rights: a customer token or a Reader key cannot.
    const token = await tokenFor('c9');
    expect((await complete(p, completion, SESSION_SECRET, token)).statusCode).toBe(403);
    const reader = (
      await p.createKey({ name: 'reader', type: 'development', services: ['game'], role: 'Reader' })
    ).key;
    expect((await complete(p, completion, SESSION_SECRET, reader)).statusCode).toBe(403);
    p.clock.advance(601);
    const expired = await complete(p, completion, SESSION_SECRET);
    expect(expired.statusCode, expired.body).toBe(400);
    expect((await complete(p, completion, SESSION_SECRET)).statusCode).toBe(404);
  });

  it('refuses a malformed customerId on authorize (400), starting no flow', async () => {
    const flows = await flowCount();
    for (const customerId of ['', 'a'.repeat(129), 'a\u0000b', 'a b', 'a/b']) {
      const res = await p.request({
        method: 'GET',
        url: `/game/oauth/authorize?customerId=${encodeURIComponent(customerId)}`,
      });
      expect(res.statusCode, JSON.stringify(customerId)).toBe(400);
      expect(res.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR' });
    }
    const extra = await p.request({ method: 'GET', url: '/game/oauth/authorize?customer=c1' });
    expect(extra.statusCode).toBe(400);
    expect(await flowCount()).toBe(flows);
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
    const { state, browser } = await connectAccount(p, fake, '9002');
    const callbackWith = async (b: Browser, s: string) => {
      // A real code from a fresh consent, so only the state decides.
      const start = await b.step(await connectLink(p));
      const back = new URL(String((await b.step(String(start.headers.location))).headers.location));
      back.searchParams.set('state', s);
      return b.step(back.toString());
    };
    const replay = await callbackWith(browser, state);
    expect(replay.status).toBe(400);
    expect(replay.json().message).toMatch(/already used/);

    const fresh = new Browser(p, fake, '9002');
    const start = await fresh.step(await connectLink(p));
    const upstream = String(start.headers.location);
    const back = new URL(String((await fresh.step(upstream)).headers.location));
    const good = back.searchParams.get('state') as string;
    const [id, exp, sig] = good.split('.');
    for (const altered of [`${id}.${Number(exp) + 60}.${sig}`, `${id}x.${exp}.${sig}`]) {
      back.searchParams.set('state', altered);
      const res = await fresh.step(back.toString());
      expect(res.status, altered).toBe(400);
      expect(res.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR' });
    }
    p.clock.advance(601);
    back.searchParams.set('state', good);
    const expired = await fresh.step(back.toString());
    expect(expired.status).toBe(400);
    expect(expired.json().message).toMatch(/expired/);
    expect(await p.ctx.db.selectFrom('game_connections').select('membership_id').execute()).toEqual([
      { membership_id: '9002' },
    ]);
  });

  it('an upstream refusal of the code is a 502', async () => {
    const browser = new Browser(p, fake, '9010');
    const start = await browser.step(await connectLink(p));
    const back = new URL(String((await browser.step(String(start.headers.location))).headers.location));
    back.searchParams.set('code', 'not-issued');
    const res = await browser.step(back.toString());
    expect(res.status).toBe(502);
    expect(res.json()).toMatchObject({
      code: 'UPSTREAM_ERROR',
      details: { httpStatus: 400, oauthError: 'invalid_grant' },
    });
  });

  it("an attacker's authorize link approved in a victim's browser is refused and binds nothing", async () => {
    const tokenCalls = () =>
      fake.requests.filter((r) => r.path.endsWith('/OAuth/Token/') && r.body.includes('authorization_code'))
        .length;
    // The attacker starts a flow with their own credential and opens the link in their browser,
    // stopping at the upstream authorize URL, which they send to the victim.
    const attacker = new Browser(p, fake, '6666');
    const start = await attacker.step(await connectLink(p));
    const upstream = String(start.headers.location);
    const before = tokenCalls();

    // The victim, signed in at the game platform, approves. Their browser holds no cookie for
    // this flow (or one of another flow of their own, or a wrong value): refused, nothing bound.
    const victims = [
      new Browser(p, fake, '5555'),
      new Browser(p, fake, '5556'),
      new Browser(p, fake, '5557'),
    ];
    await victims[1]?.step(await connectLink(p));
    const reasons = ['browser_cookie_missing', 'browser_cookie_missing', 'browser_mismatch'];
    for (const [i, victim] of victims.entries()) {
      // Each victim gets a fresh attacker link (a refused state is spent).
      const link = i === 0 ? upstream : String((await attacker.step(await connectLink(p))).headers.location);
      const stateId = (new URL(link).searchParams.get('state') ?? '').split('.')[0] ?? '';
      if (i === 2)
        victim.cookies.set(`game_oauth_${stateId}`, { value: 'A'.repeat(43), path: '/game/oauth/callback' });
      const callback = String((await victim.step(link)).headers.location);
      const refused = await victim.step(callback);
      expect(refused.status, refused.body).toBe(403);
      expect(refused.json()).toMatchObject({
        error: true,
        code: 'FORBIDDEN',
        details: { reason: reasons[i] },
        requestId: expect.any(String),
      });
      // The attacker cannot finish it either: the state is spent.
      const replay = await attacker.step(callback);
      expect(replay.status).toBe(400);
    }
    expect(tokenCalls()).toBe(before);
    expect(await p.ctx.db.selectFrom('game_connections').selectAll().execute()).toEqual([]);
    expect((await memberships()).statusCode).toBe(401);
  });

  it('the binding cookie is Secure and scoped to the public path when the platform is public over https', async () => {
    const secure = await createTestPlatform({
      dialect,
      modules,
      env: fake.env({ PUBLIC_URL: 'https://api.example.test/base/' }),
    });
    try {
      const res = await secure.request({ method: 'GET', url: '/game/oauth/authorize' });
      const link = new URL(res.json().authorizeUrl);
      expect(`${link.origin}${link.pathname}`).toBe('https://api.example.test/base/game/oauth/start');
      const start = await secure.request({
        method: 'GET',
        url: `/game/oauth/start${link.search}`,
        key: null,
      });
      expect(start.statusCode, start.body).toBe(302);
      expect(String(start.headers['set-cookie'])).toMatch(
        /^game_oauth_[\w-]+=[\w-]{43}; Path=\/base\/game\/oauth\/callback; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/,
      );
    } finally {
      await secure.close();
    }
  });

  it('the fake token endpoint requires the PKCE verifier whose S256 is the challenge', async () => {
    const verifier = 'v'.repeat(43);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const code = async (withChallenge = challenge) => {
      const url = new URL(`${fake.baseUrl}/en/OAuth/Authorize`);
      for (const [k, v] of Object.entries({
        client_id: FAKE_CLIENT_ID,
        response_type: 'code',
        state: 's',
        code_challenge: withChallenge,
        code_challenge_method: 'S256',
      })) {
        url.searchParams.set(k, v);
      }
      const res = await fetch(url, { headers: { cookie: 'bungie_user=4444' }, redirect: 'manual' });
      expect(res.status).toBe(302);
      return new URL(String(res.headers.get('location'))).searchParams.get('code') as string;
    };
    const exchange = (form: Record<string, string>) =>
      fetch(`${fake.baseUrl}/Platform/App/OAuth/Token/`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${FAKE_CLIENT_ID}:${FAKE_CLIENT_SECRET}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'authorization_code', ...form }).toString(),
      });
    expect((await exchange({ code: await code() })).status).toBe(400);
    expect((await exchange({ code: await code(), code_verifier: 'w'.repeat(43) })).status).toBe(400);
    expect((await exchange({ code: await code(), code_verifier: challenge })).status).toBe(400);
    const ok = await exchange({ code: await code(), code_verifier: verifier });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { membership_id: string }).membership_id).toBe('4444');
    // Without a challenge the authorize request itself is refused.
    const plain = new URL(
      `${fake.baseUrl}/en/OAuth/Authorize?client_id=${FAKE_CLIENT_ID}&response_type=code`,
    );
    expect((await fetch(plain, { headers: { cookie: 'bungie_user=4444' }, redirect: 'manual' })).status).toBe(
      400,
    );
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
    expect(res.json().details.authorizeUrl).toBeUndefined();
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
    const token = await tokenFor('cust_1');
    expect((await memberships(token)).statusCode).toBe(401);
    // The application's own usage figures are not a customer's business.
    const usage = await p.request({ method: 'GET', url: '/game/App/ApiUsage/1', key: token });
    expect(usage.statusCode).toBe(403);
    await connectAccount(p, fake, '7777', 'cust_1');
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
