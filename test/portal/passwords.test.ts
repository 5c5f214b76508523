import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_MAX, passwordProblem } from '../../src/modules/portal/password-rules.js';
import { hashPassword, verifyNothing, verifyPassword } from '../../src/modules/portal/passwords.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { login, OWNER_EMAIL, portalApi, tokenOf } from './support.js';

describe('password hashing', () => {
  it('stores scrypt$N$r$p$salt$hash with a fresh salt, and verifies only the same password', async () => {
    const a = await hashPassword('glass orchard 19 ember');
    const b = await hashPassword('glass orchard 19 ember');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('glass orchard 19 ember', a)).toBe(true);
    expect(await verifyPassword('glass orchard 19 embers', a)).toBe(false);
    expect(await verifyPassword('', a)).toBe(false);
  });

  it('never matches a malformed or tampered hash, nor asks for unbounded memory', async () => {
    const good = await hashPassword('glass orchard 19 ember');
    const parts = good.split('$');
    for (const bad of [
      '',
      'bcrypt$x',
      parts.slice(0, 5).join('$'),
      [...parts.slice(0, 5), 'AAAA'].join('$'),
      ['scrypt', 2 ** 30, 8, 1, parts[4], parts[5]].join('$'),
      ['scrypt', 'x', 8, 1, parts[4], parts[5]].join('$'),
    ])
      expect(await verifyPassword('glass orchard 19 ember', bad)).toBe(false);
    expect(await verifyNothing('anything')).toBe(false);
  });
});

describe('password rules', () => {
  const email = 'casey.jones@example.com';
  it.each([
    ['short1!', /at least 12 characters/],
    [`${'x'.repeat(PASSWORD_MAX - 3)}abcd`, /at most 256 characters/],
    ['Password2024!', /too common/],
    ['p@ssw0rd12345', /too common/],
    ['passwordpassword', /too common/],
    ['!!Sunshine2024', /too common/],
    ['qwertyuiopasdf', /too common/],
    ['123456789012', /too common/],
    ['aaaaaaaaaaaaaaaa', /too few different characters/],
    ['casey.jones@example.com1', /email/],
    ['my name is casey.jones', /email/],
    ['CASEY.JONES rules 2024', /email/],
  ])('refuses %j', (password, message) => {
    expect(passwordProblem(password, email)).toMatch(message);
  });

  it.each([
    'correct horse battery staple',
    'Tr0ub4dor&3 zebra',
    'violet tundra lantern 47',
    'ünïcödé pässwörd ok',
  ])('accepts %j', (password) => {
    expect(passwordProblem(password, email)).toBeNull();
  });

  it('counts characters, not bytes', () => {
    expect(passwordProblem('ééééé fghijk', email)).toBeNull();
    expect(passwordProblem('日本語のパスワード', email)).toMatch(/at least 12/);
  });
});

const dialects = await testDialects();

describe.each(dialects)('password rules over HTTP on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
  });
  afterAll(async () => {
    await p.close();
  });

  it('a setup with a short, common or email-built password is a 400 in words, and keeps the link usable', async () => {
    const token = tokenOf((await portalApi(p).members.setupLink(OWNER_EMAIL)).url);
    const setup = (password: string) =>
      p.request({ method: 'POST', url: '/v1/auth/setup', key: null, payload: { token, password } });
    for (const [password, message] of [
      ['too short', /at least 12 characters/],
      ['Password123456!', /too common/],
      ['owner-localhost-2024', /email/],
    ] as const) {
      const res = await setup(password);
      expect(res.statusCode, password).toBe(400);
      expect(res.json()).toMatchObject({
        error: true,
        code: 'VALIDATION_ERROR',
        details: { fields: [{ field: 'password' }] },
      });
      expect(res.json().message).toMatch(message);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    expect((await setup('violet tundra lantern 47')).statusCode).toBe(200);
    expect((await login(p, OWNER_EMAIL, 'violet tundra lantern 47')).csrfToken).toBeTruthy();
  });

  it('an invitation with a weak password is refused the same way', async () => {
    const invited = await p.request({
      method: 'POST',
      url: '/v1/members/invites',
      payload: { email: 'morgan@example.com', role: 'viewer' },
    });
    const token = tokenOf(invited.json().inviteUrl);
    const weak = await p.request({
      method: 'POST',
      url: '/v1/auth/invites/accept',
      key: null,
      payload: { token, name: 'Morgan', password: 'morgan1234567' },
    });
    expect(weak.statusCode).toBe(400);
    expect(weak.json().message).toMatch(/email/);
    const blank = await p.request({
      method: 'POST',
      url: '/v1/auth/invites/accept',
      key: null,
      payload: { token, name: '   ', password: 'quiet river 8 stones' },
    });
    expect(blank.statusCode).toBe(400);
    const ok = await p.request({
      method: 'POST',
      url: '/v1/auth/invites/accept',
      key: null,
      payload: { token, name: 'Morgan', password: 'quiet river 8 stones' },
    });
    expect(ok.statusCode).toBe(200);
  });

  it('the CLI path sets a password directly and ends the member’s sessions', async () => {
    const session = await login(p, OWNER_EMAIL, 'violet tundra lantern 47');
    const { members } = portalApi(p);
    await expect(members.setPassword(OWNER_EMAIL, 'abc')).rejects.toThrow(/at least 12/);
    await members.setPassword(OWNER_EMAIL, 'ochre falcon drift 31');
    const after = await p.request({
      method: 'GET',
      url: '/v1/auth/session',
      key: null,
      headers: { cookie: session.cookie },
    });
    expect(after.statusCode).toBe(401);
    expect((await login(p, OWNER_EMAIL, 'ochre falcon drift 31')).csrfToken).toBeTruthy();
  });
});
