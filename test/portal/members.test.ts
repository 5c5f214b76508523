import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/core/db/database.js';
import { migrateToLatest } from '../../src/core/db/migrate.js';
import { authMigrations } from '../../src/modules/auth/migrations/index.js';
import { portalMigrations } from '../../src/modules/portal/migrations/index.js';
import { otherAccountKey } from '../helpers/accounts.js';
import { authSuite } from '../helpers/auth-suite.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { PG_URL, testDialects, uniqueName } from '../helpers/services.js';
import {
  asSession,
  login,
  memberSession,
  OWNER_EMAIL,
  ownerSession,
  type Session,
  tokenOf,
} from './support.js';

const dialects = await testDialects();

describe.each(dialects)('portal members on %s', (dialect) => {
  let p: TestPlatform;
  let owner: Session;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
    owner = await ownerSession(p);
  });
  afterAll(async () => {
    await p.close();
  });

  const invite = (session: Session, email: string, role: string) =>
    asSession(p, session, { method: 'POST', url: '/v1/members/invites', payload: { email, role } });
  const accept = (token: string, name: string, password: string) =>
    p.request({
      method: 'POST',
      url: '/v1/auth/invites/accept',
      key: null,
      payload: { token, name, password },
    });

  authSuite(() => p, { method: 'GET', url: '/v1/members', service: 'core' });
  authSuite(() => p, {
    method: 'POST',
    url: '/v1/members/invites',
    service: 'core',
    payload: { email: 'suite@example.com', role: 'viewer' },
    weakRole: 'Writer',
  });

  it('invite → accept → sign in as the member; the link works once', async () => {
    const res = await invite(owner, 'Dana@Example.com', 'developer');
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ email: 'dana@example.com', role: 'developer' });
    expect(body.inviteUrl).toMatch(/^http:\/\/localhost:8080\/portal\/#\/invite\?token=[\w-]{43}$/);
    const days = (Date.parse(body.expiresAt) - p.clock.now().getTime()) / 86_400_000;
    expect(days).toBe(7);
    const token = tokenOf(body.inviteUrl);
    const stored = await p.ctx.db.selectFrom('member_tokens').selectAll().where('id', '=', body.id).execute();
    expect(JSON.stringify(stored)).not.toContain(token);

    const accepted = await accept(token, 'Dana', 'amber harbour quiet 58');
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json().member).toMatchObject({
      email: 'dana@example.com',
      name: 'Dana',
      role: 'developer',
    });
    expect(String(accepted.headers['set-cookie'])).toMatch(/^platform_session=/);
    const again = await accept(token, 'Dana again', 'amber harbour quiet 58');
    expect(again.statusCode).toBe(400);

    const dana = await login(p, 'dana@example.com', 'amber harbour quiet 58');
    const session = await asSession(p, dana, { method: 'GET', url: '/v1/auth/session' });
    expect(session.json().member).toMatchObject({ email: 'dana@example.com', role: 'developer' });
    const list = await asSession(p, dana, { method: 'GET', url: '/v1/members' });
    expect(list.statusCode).toBe(200);
    expect(list.json().data.map((m: { email: string }) => m.email)).toEqual(
      expect.arrayContaining([OWNER_EMAIL, 'dana@example.com']),
    );
  });

  it('refuses inviting as owner (400), an existing member (409) and a bad email (400)', async () => {
    expect((await invite(owner, 'boss2@example.com', 'owner')).statusCode).toBe(400);
    const taken = await invite(owner, OWNER_EMAIL.toUpperCase(), 'admin');
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toMatchObject({ code: 'CONFLICT' });
    expect((await invite(owner, 'not an email', 'viewer')).statusCode).toBe(400);
  });

  it('an invitation expires after 7 days', async () => {
    const res = await invite(owner, 'late@example.com', 'viewer');
    p.clock.advance(7 * 86_400 + 1);
    const late = await accept(tokenOf(res.json().inviteUrl), 'Late', 'amber harbour quiet 58');
    expect(late.statusCode).toBe(400);
    expect(late.json().message).toMatch(/expired/);
    owner = await login(p, OWNER_EMAIL, 'violet tundra lantern 47');
  });

  it('a viewer reads but gets 403 creating a key; a developer cannot manage keys or members', async () => {
    const viewer = await memberSession(p, owner, 'vic@example.com', 'viewer');
    const payload = { name: 'nope', type: 'development', services: ['core'], role: 'Reader' };
    const create = await asSession(p, viewer, { method: 'POST', url: '/v1/api-keys', payload });
    expect(create.statusCode).toBe(403);
    expect(create.json()).toMatchObject({ code: 'FORBIDDEN' });
    expect((await asSession(p, viewer, { method: 'GET', url: '/api/v1/workflows' })).statusCode).toBe(200);
    expect((await asSession(p, viewer, { method: 'GET', url: '/v1/members' })).statusCode).toBe(200);
    const activate = await asSession(p, viewer, {
      method: 'POST',
      url: '/api/v1/workflows/wf_missing/activate',
    });
    expect(activate.statusCode).toBe(403);

    const developer = await memberSession(p, owner, 'dev@example.com', 'developer');
    expect((await asSession(p, developer, { method: 'POST', url: '/v1/api-keys', payload })).statusCode).toBe(
      403,
    );
    expect((await invite(developer, 'x@example.com', 'viewer')).statusCode).toBe(403);
  });

  it('a role change applies on the member’s next request', async () => {
    const member = await memberSession(p, owner, 'riley@example.com', 'viewer');
    const payload = { name: 'riley', type: 'development', services: ['core'], role: 'Reader' };
    expect((await asSession(p, member, { method: 'POST', url: '/v1/api-keys', payload })).statusCode).toBe(
      403,
    );
    const changed = await asSession(p, owner, {
      method: 'PATCH',
      url: `/v1/members/${member.memberId}`,
      payload: { role: 'admin' },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({ id: member.memberId, role: 'admin' });
    expect((await asSession(p, member, { method: 'POST', url: '/v1/api-keys', payload })).statusCode).toBe(
      201,
    );
    // And back down: an admin made viewer loses key management at once.
    await asSession(p, owner, {
      method: 'PATCH',
      url: `/v1/members/${member.memberId}`,
      payload: { role: 'viewer' },
    });
    expect((await asSession(p, member, { method: 'GET', url: '/v1/api-keys' })).statusCode).toBe(403);
  });

  it('the owner cannot be changed or removed, and nobody is made owner', async () => {
    const admin = await memberSession(p, owner, 'ada@example.com', 'admin');
    const ownerId = owner.memberId;
    const demote = await asSession(p, admin, {
      method: 'PATCH',
      url: `/v1/members/${ownerId}`,
      payload: { role: 'viewer' },
    });
    expect(demote.statusCode).toBe(403);
    expect((await asSession(p, admin, { method: 'DELETE', url: `/v1/members/${ownerId}` })).statusCode).toBe(
      403,
    );
    const promote = await asSession(p, owner, {
      method: 'PATCH',
      url: `/v1/members/${admin.memberId}`,
      payload: { role: 'owner' },
    });
    expect(promote.statusCode).toBe(400);
    expect((await asSession(p, owner, { method: 'GET', url: '/v1/auth/session' })).json().member.role).toBe(
      'owner',
    );
  });

  it('a removed member’s sessions end at once', async () => {
    const member = await memberSession(p, owner, 'gone@example.com', 'developer');
    expect((await asSession(p, member, { method: 'GET', url: '/v1/api-keys' })).statusCode).toBe(403);
    expect((await asSession(p, member, { method: 'GET', url: '/api/v1/workflows' })).statusCode).toBe(200);
    const removed = await asSession(p, owner, { method: 'DELETE', url: `/v1/members/${member.memberId}` });
    expect(removed.statusCode).toBe(204);
    expect((await asSession(p, member, { method: 'GET', url: '/api/v1/workflows' })).statusCode).toBe(401);
    const rows = await p.ctx.db
      .selectFrom('sessions')
      .selectAll()
      .where('member_id', '=', member.memberId)
      .execute();
    expect(rows).toHaveLength(0);
    expect(
      (await asSession(p, owner, { method: 'DELETE', url: `/v1/members/${member.memberId}` })).statusCode,
    ).toBe(404);
  });

  it('keys: core:read lists members, core:admin invites; another account sees none of them', async () => {
    const reader = await p.createKey({ name: 'r', type: 'development', services: ['core'], role: 'Reader' });
    const list = await p.request({ method: 'GET', url: '/v1/members', key: reader.key });
    expect(list.statusCode).toBe(200);
    expect(list.json().data.some((m: { email: string }) => m.email === OWNER_EMAIL)).toBe(true);
    const refused = await p.request({
      method: 'POST',
      url: '/v1/members/invites',
      key: reader.key,
      payload: { email: 'k@example.com', role: 'viewer' },
    });
    expect(refused.statusCode).toBe(403);
    const byAdminKey = await p.request({
      method: 'POST',
      url: '/v1/members/invites',
      payload: { email: 'k@example.com', role: 'viewer' },
    });
    expect(byAdminKey.statusCode).toBe(201);

    const other = await otherAccountKey(p);
    const theirs = await p.request({ method: 'GET', url: '/v1/members', key: other });
    expect(theirs.json().data).toEqual([]);
    const patch = await p.request({
      method: 'PATCH',
      url: `/v1/members/${owner.memberId}`,
      key: other,
      payload: { role: 'viewer' },
    });
    expect(patch.statusCode).toBe(404);
  });
});

describe.each(dialects)('portal migration on %s', (dialect) => {
  it('gives every existing account its owner member, by the account email', async () => {
    const schema = dialect === 'postgres' ? uniqueName('t') : undefined;
    const database = await openDatabase({
      databaseUrl: dialect === 'postgres' ? PG_URL : '',
      dataDir: ':memory:',
      pgSchema: schema,
      pgPoolSize: 2,
    });
    try {
      await migrateToLatest(database.db, authMigrations);
      for (const [id, email] of [
        ['acct_a', 'First@Example.com'],
        ['acct_b', 'second@example.com'],
      ] as const)
        await database.db
          .insertInto('accounts')
          .values({
            id,
            email,
            name: `Account ${id}`,
            password_hash: null,
            created_at: new Date().toISOString(),
          })
          .execute();
      await migrateToLatest(database.db, { ...authMigrations, ...portalMigrations });
      const members = await database.db.selectFrom('members').selectAll().orderBy('account_id').execute();
      expect(members.map((m) => [m.account_id, m.email, m.role, m.password_hash])).toEqual([
        ['acct_a', 'first@example.com', 'owner', null],
        ['acct_b', 'second@example.com', 'owner', null],
      ]);
    } finally {
      if (schema) await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(database.db);
      await database.close();
    }
  });
});
