import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import {
  asSession,
  login,
  loginRequest,
  memberSession,
  OWNER_EMAIL,
  OWNER_PASSWORD,
  ownerSession,
  portalApi,
  type Session,
  sessionOf,
  tokenOf,
} from './support.js';

const dialects = await testDialects();

describe.each(dialects)('portal sessions on %s', (dialect) => {
  let p: TestPlatform;
  let owner: Session;
  beforeAll(async () => {
    p = await createTestPlatform({
      dialect,
      env: { LOGIN_ATTEMPTS_PER_WINDOW: '3', LOGIN_ATTEMPTS_PER_IP: '6' },
    });
    owner = await ownerSession(p);
  });
  afterAll(async () => {
    await p.close();
  });

  it('first start makes the owner member, without a password, and a setup link for it', async () => {
    const row = await p.ctx.db
      .selectFrom('members')
      .selectAll()
      .where('email', '=', OWNER_EMAIL)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ account_id: p.accountId, role: 'owner' });
    const tokens = await p.ctx.db
      .selectFrom('member_tokens')
      .selectAll()
      .where('kind', '=', 'setup')
      .execute();
    expect(tokens.length).toBeGreaterThanOrEqual(1);
    // Only hashes are stored: a token is 43 base64url characters, its hash 64 hex ones.
    for (const token of tokens) expect(token.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a setup link sets the password once; the second use is refused', async () => {
    const { url } = await portalApi(p).members.setupLink(OWNER_EMAIL);
    expect(url).toMatch(/^http:\/\/localhost:8080\/portal\/#\/setup\?token=[\w-]{43}$/);
    const token = tokenOf(url);
    const first = await p.request({
      method: 'POST',
      url: '/v1/auth/setup',
      key: null,
      payload: { token, password: OWNER_PASSWORD },
    });
    const session = sessionOf(first);
    expect(first.json().member).toMatchObject({ email: OWNER_EMAIL, role: 'owner' });
    const again = await p.request({
      method: 'POST',
      url: '/v1/auth/setup',
      key: null,
      payload: { token, password: 'another fine passphrase 1' },
    });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR' });
    expect(again.json().message).toMatch(/already used or expired/);
    // The first password stands; the session it opened works.
    owner = await login(p, OWNER_EMAIL, OWNER_PASSWORD);
    expect((await asSession(p, session, { method: 'GET', url: '/v1/auth/session' })).statusCode).toBe(200);
  });

  it('signs in: member, CSRF token, expiry and an HttpOnly SameSite=Lax cookie (not Secure over http)', async () => {
    const res = await loginRequest(p, OWNER_EMAIL.toUpperCase(), OWNER_PASSWORD);
    const session = sessionOf(res);
    const body = res.json();
    expect(body.member).toMatchObject({ email: OWNER_EMAIL, role: 'owner', name: 'Owner' });
    expect(body.csrfToken).toMatch(/^[\w-]{43}$/);
    const hours = (Date.parse(body.expiresAt) - p.clock.now().getTime()) / 3_600_000;
    expect(hours).toBe(168);
    const attributes = session.setCookie.split('; ');
    expect(attributes[0]).toMatch(/^platform_session=[\w-]{43}$/);
    expect(attributes).toEqual(
      expect.arrayContaining(['Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${168 * 3600}`]),
    );
    expect(attributes).not.toContain('Secure');
    // Only the hash of the cookie value is stored.
    const value = session.cookie.split('=')[1] ?? '';
    const rows = await p.ctx.db.selectFrom('sessions').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(value);
  });

  it('a wrong password and an unknown email get the same 401', async () => {
    const wrong = await loginRequest(p, OWNER_EMAIL, 'not the password at all', {
      remoteAddress: '10.0.0.1',
    });
    const unknown = await loginRequest(p, 'nobody@example.com', OWNER_PASSWORD, {
      remoteAddress: '10.0.0.1',
    });
    for (const res of [wrong, unknown]) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ code: 'UNAUTHORIZED', message: 'Email or password is wrong' });
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });

  it('the session reads the key list and the workflow API', async () => {
    const keys = await asSession(p, owner, { method: 'GET', url: '/v1/api-keys' });
    expect(keys.statusCode, keys.body).toBe(200);
    expect(keys.json().data.length).toBeGreaterThanOrEqual(1);
    const workflows = await asSession(p, owner, { method: 'GET', url: '/api/v1/workflows' });
    expect(workflows.statusCode, workflows.body).toBe(200);
    expect(Array.isArray(workflows.json().data)).toBe(true);
  });

  it('a POST with the session needs the CSRF token: 403 without or wrong, 201 with it', async () => {
    const payload = { name: 'from portal', type: 'development', services: ['core'], role: 'Reader' };
    const without = await asSession(p, owner, { method: 'POST', url: '/v1/api-keys', payload, csrf: false });
    expect(without.statusCode).toBe(403);
    expect(without.json()).toMatchObject({ code: 'FORBIDDEN' });
    expect(without.json().message).toMatch(/CSRF/);
    const wrong = await asSession(p, owner, {
      method: 'POST',
      url: '/v1/api-keys',
      payload,
      csrf: false,
      headers: { 'x-csrf-token': `${owner.csrfToken.slice(0, -1)}x` },
    });
    expect(wrong.statusCode).toBe(403);
    const created = await asSession(p, owner, { method: 'POST', url: '/v1/api-keys', payload });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().key).toMatch(/^DEV_API_/);
  });

  it('a request from another origin is refused; this origin and the Host pass', async () => {
    const evil = await asSession(p, owner, {
      method: 'GET',
      url: '/v1/api-keys',
      headers: { origin: 'https://evil.example' },
    });
    expect(evil.statusCode).toBe(403);
    expect(evil.json().message).toMatch(/Origin/);
    const post = await asSession(p, owner, {
      method: 'POST',
      url: '/v1/members/invites',
      payload: { email: 'x@example.com', role: 'viewer' },
      headers: { origin: 'null' },
    });
    expect(post.statusCode).toBe(403);
    const publicOrigin = await asSession(p, owner, {
      method: 'GET',
      url: '/v1/api-keys',
      headers: { origin: 'http://localhost:8080' },
    });
    expect(publicOrigin.statusCode).toBe(200);
    const host = await asSession(p, owner, {
      method: 'GET',
      url: '/v1/api-keys',
      headers: { origin: 'https://portal.internal:8443', host: 'portal.internal:8443' },
    });
    expect(host.statusCode).toBe(200);
    const crossLogin = await loginRequest(p, OWNER_EMAIL, OWNER_PASSWORD, {
      headers: { origin: 'https://evil.example' },
    });
    expect(crossLogin.statusCode).toBe(403);
    expect(crossLogin.headers['set-cookie']).toBeUndefined();
  });

  it('a key header wins: the cookie is ignored, and no CSRF token is asked of the key', async () => {
    const viewer = await memberSession(p, owner, 'viewer-key@example.com', 'viewer');
    const payload = { name: 'by key', type: 'development', services: ['core'], role: 'Reader' };
    const withKey = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      payload,
      headers: { cookie: viewer.cookie },
    });
    expect(withKey.statusCode, withKey.body).toBe(201);
    const badKey = await p.request({
      method: 'GET',
      url: '/v1/api-keys',
      key: 'not-a-key',
      headers: { cookie: owner.cookie },
    });
    expect(badKey.statusCode).toBe(401);
  });

  it('customer tokens are minted by keys only: a session gets a clear 403', async () => {
    const res = await asSession(p, owner, {
      method: 'POST',
      url: '/v1/auth/tokens',
      payload: { customerId: 'cus_1', scopes: ['commerce:read'] },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toMatch(/session/);
  });

  it('GET /v1/auth/session shows the member, the account and the same CSRF token; 401 without a cookie', async () => {
    const res = await asSession(p, owner, { method: 'GET', url: '/v1/auth/session' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      member: { email: OWNER_EMAIL, role: 'owner' },
      account: { id: p.accountId, name: 'Owner' },
      csrfToken: owner.csrfToken,
    });
    const none = await p.request({ method: 'GET', url: '/v1/auth/session', key: null });
    expect(none.statusCode).toBe(401);
    const bogus = await p.request({
      method: 'GET',
      url: '/v1/auth/session',
      key: null,
      headers: { cookie: 'platform_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
    });
    expect(bogus.statusCode).toBe(401);
    const byKey = await p.request({ method: 'GET', url: '/v1/auth/session' });
    expect(byKey.statusCode).toBe(403);
  });

  it('logout ends the session and clears the cookie', async () => {
    const session = await login(p, OWNER_EMAIL, OWNER_PASSWORD);
    const noCsrf = await asSession(p, session, { method: 'POST', url: '/v1/auth/logout', csrf: false });
    expect(noCsrf.statusCode).toBe(403);
    const out = await asSession(p, session, { method: 'POST', url: '/v1/auth/logout' });
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^platform_session=; Path=\/; Max-Age=0/);
    const after = await asSession(p, session, { method: 'GET', url: '/v1/api-keys' });
    expect(after.statusCode).toBe(401);
  });

  it('lists your own sessions and revokes another: that cookie gets 401; another member’s session is a 404', async () => {
    const here = await login(p, OWNER_EMAIL, OWNER_PASSWORD);
    const elsewhere = await login(p, OWNER_EMAIL, OWNER_PASSWORD);
    const list = await asSession(p, here, { method: 'GET', url: '/v1/auth/sessions' });
    expect(list.statusCode).toBe(200);
    const data = list.json().data as Array<{ id: string; current: boolean; ip: string | null }>;
    expect(data.filter((s) => s.current)).toHaveLength(1);
    expect(data.length).toBeGreaterThanOrEqual(2);
    const elsewhereId = (await asSession(p, elsewhere, { method: 'GET', url: '/v1/auth/sessions' }))
      .json()
      .data.find((s: { current: boolean }) => s.current).id as string;
    expect(data.map((s) => s.id)).toContain(elsewhereId);

    const revoked = await asSession(p, here, { method: 'DELETE', url: `/v1/auth/sessions/${elsewhereId}` });
    expect(revoked.statusCode).toBe(204);
    expect((await asSession(p, elsewhere, { method: 'GET', url: '/v1/api-keys' })).statusCode).toBe(401);
    expect((await asSession(p, here, { method: 'GET', url: '/v1/api-keys' })).statusCode).toBe(200);

    const other = await memberSession(p, owner, 'other-sessions@example.com', 'developer');
    const theirs = (await asSession(p, other, { method: 'GET', url: '/v1/auth/sessions' })).json().data[0].id;
    const refused = await asSession(p, here, { method: 'DELETE', url: `/v1/auth/sessions/${theirs}` });
    expect(refused.statusCode).toBe(404);
    expect((await asSession(p, other, { method: 'GET', url: '/v1/auth/session' })).statusCode).toBe(200);
  });

  it('failed sign-ins from one client for one email make that client wait, progressively; the member is never locked out', async () => {
    const email = 'limited@example.com';
    const password = 'saffron glacier window 63';
    await memberSession(p, owner, email, 'viewer', password);
    const attacker = { remoteAddress: '10.1.0.1' };
    for (let i = 0; i < 3; i++)
      expect((await loginRequest(p, email, 'wrong password here', attacker)).statusCode).toBe(401);
    // Past its three free failures the guesser waits, even with the right password…
    const waiting = await loginRequest(p, email, password, attacker);
    expect(waiting.statusCode).toBe(429);
    expect(waiting.json()).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
    expect(Number(waiting.headers['retry-after'])).toBe(1);
    // …while the member, from their own address, signs in at once.
    expect((await loginRequest(p, email, password, { remoteAddress: '10.1.0.9' })).statusCode).toBe(200);
    // The wait ends by itself; the next failure doubles it.
    await until(
      async () => (await loginRequest(p, email, 'wrong password here', attacker)).statusCode === 401,
      'the wait to end',
    );
    const longer = await loginRequest(p, email, password, attacker);
    expect(longer.statusCode).toBe(429);
    expect(Number(longer.headers['retry-after'])).toBe(2);
  });

  it('one email failing from many clients slows every client briefly, never for the window', async () => {
    const email = 'distributed@example.com';
    const password = 'copper lantern meadow 17';
    await memberSession(p, owner, email, 'viewer', password);
    // Five times the pair allowance (3) from as many addresses as it takes: each pair stays free.
    for (let i = 0; i < 15; i++)
      expect(
        (await loginRequest(p, email, 'wrong password here', { remoteAddress: `10.3.${i}.1` })).statusCode,
      ).toBe(401);
    const slowed = await loginRequest(p, email, password, { remoteAddress: '10.3.99.1' });
    expect(slowed.statusCode).toBe(429);
    expect(Number(slowed.headers['retry-after'])).toBeLessThanOrEqual(30);
    await until(
      async () => (await loginRequest(p, email, password, { remoteAddress: '10.3.99.1' })).statusCode === 200,
      'the member to sign in',
      35_000,
    );
  });

  it('failed sign-ins are limited per client address, whatever the email', async () => {
    for (let i = 0; i < 6; i++) {
      const res = await loginRequest(p, `guess${i}@example.com`, 'wrong password here', {
        remoteAddress: '10.2.0.1',
      });
      expect(res.statusCode).toBe(401);
    }
    const blocked = await loginRequest(p, OWNER_EMAIL, OWNER_PASSWORD, { remoteAddress: '10.2.0.1' });
    expect(blocked.statusCode).toBe(429);
    expect(blocked.headers['retry-after']).toBeDefined();
    const elsewhere = await loginRequest(p, OWNER_EMAIL, OWNER_PASSWORD, { remoteAddress: '10.2.0.2' });
    expect(elsewhere.statusCode).toBe(200);
  });

  it('last seen is written at most once a minute; a session idle past SESSION_IDLE_MINUTES ends', async () => {
    const session = await login(p, OWNER_EMAIL, OWNER_PASSWORD);
    const id = (await asSession(p, session, { method: 'GET', url: '/v1/auth/sessions' }))
      .json()
      .data.find((s: { current: boolean }) => s.current).id as string;
    const lastSeen = async () =>
      (
        await p.ctx.db
          .selectFrom('sessions')
          .select('last_seen_at')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).last_seen_at;
    const first = await lastSeen();
    p.clock.advance(30);
    expect((await asSession(p, session, { method: 'GET', url: '/v1/api-keys' })).statusCode).toBe(200);
    expect(await lastSeen()).toBe(first);
    p.clock.advance(31);
    expect((await asSession(p, session, { method: 'GET', url: '/v1/api-keys' })).statusCode).toBe(200);
    expect(await lastSeen()).toBe(p.clock.now().toISOString());

    p.clock.advance(719 * 60);
    expect((await asSession(p, session, { method: 'GET', url: '/v1/api-keys' })).statusCode).toBe(200);
    p.clock.advance(720 * 60 + 1);
    const idle = await asSession(p, session, { method: 'GET', url: '/v1/api-keys' });
    expect(idle.statusCode).toBe(401);
    expect(idle.json().message).toMatch(/expired/);
  });

  it('a session ends SESSION_TTL_HOURS after sign-in, however active', async () => {
    const session = await login(p, OWNER_EMAIL, OWNER_PASSWORD);
    for (let hours = 0; hours + 11 < 168; hours += 11) {
      p.clock.advance(11 * 3600);
      expect((await asSession(p, session, { method: 'GET', url: '/v1/api-keys' })).statusCode).toBe(200);
    }
    p.clock.advance(11 * 3600);
    expect((await asSession(p, session, { method: 'GET', url: '/v1/api-keys' })).statusCode).toBe(401);
    owner = await login(p, OWNER_EMAIL, OWNER_PASSWORD);
  });
});

describe.each(dialects)('portal session cookie under an https PUBLIC_URL on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect, env: { PUBLIC_URL: 'https://platform.example.com' } });
  });
  afterAll(async () => {
    await p.close();
  });

  it('is Secure, and links and origins are the public URL’s', async () => {
    const session = await ownerSession(p);
    expect(session.setCookie.split('; ')).toContain('Secure');
    const { url } = await portalApi(p).members.setupLink(OWNER_EMAIL);
    expect(url.startsWith('https://platform.example.com/portal/#/setup?token=')).toBe(true);
    const same = await asSession(p, session, {
      method: 'GET',
      url: '/v1/members',
      headers: { origin: 'https://platform.example.com' },
    });
    expect(same.statusCode).toBe(200);
    const other = await asSession(p, session, {
      method: 'GET',
      url: '/v1/members',
      headers: { origin: 'http://platform.example.com' },
    });
    expect(other.statusCode).toBe(403);
  });
});
