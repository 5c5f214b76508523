import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authModule } from '../../src/modules/auth/index.js';
import { cartModule } from '../../src/modules/cart/index.js';
import { commerceModule } from '../../src/modules/commerce/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { profilesModule } from '../../src/modules/profiles/index.js';
import { otherAccountKey } from '../helpers/accounts.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';

interface Profile {
  userId: string;
  displayName: string;
  email: string;
  preferences: { categories: string[]; moods: string[]; dislikedNotes: string[]; occasions: string[] };
  registrationSource: string;
  createdAt: string;
  updatedAt: string;
}

const registration = (userId: string, extra: Record<string, unknown> = {}) => ({
  userId,
  email: `${userId}@example.com`,
  name: `User ${userId}`,
  registrationSource: 'storefront',
  ...extra,
});

/** The fields a 400 names. */
function fieldsOf(res: LightMyRequestResponse): string[] {
  expect(res.statusCode, res.body).toBe(400);
  const body = res.json() as { code: string; details: { fields?: Array<{ field: string }> } };
  expect(body.code).toBe('VALIDATION_ERROR');
  return (body.details.fields ?? []).map((f) => f.field);
}

describe.each(await testDialects())('user profiles on %s', (dialect) => {
  let p: TestPlatform;

  beforeAll(async () => {
    // Without the agents module: profiles stand on commerce and the cart alone.
    p = await createTestPlatform({
      dialect,
      modules: [authModule, healthModule, commerceModule, cartModule, profilesModule],
    });
  });
  afterAll(() => p?.close());

  const register = (body: Record<string, unknown>, key?: string) =>
    p.request({ method: 'POST', url: '/api/users', payload: body, ...(key ? { key } : {}) });
  const getProfile = (userId: string, key?: string) =>
    p.request({ method: 'GET', url: `/api/users/${userId}/profile`, ...(key ? { key } : {}) });
  const patchProfile = (userId: string, payload: Record<string, unknown>, key?: string) =>
    p.request({ method: 'PATCH', url: `/api/users/${userId}/profile`, payload, ...(key ? { key } : {}) });
  const token = async (customerId: string, scopes = ['agent:read', 'agent:write']) => {
    const res = await p.request({ method: 'POST', url: '/v1/auth/tokens', payload: { customerId, scopes } });
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { token: string }).token;
  };
  const carts = (customerId: string) =>
    p.ctx.db
      .selectFrom('carts')
      .select('id')
      .where('account_id', '=', p.accountId)
      .where('customer_id', '=', customerId)
      .execute();
  const cartItems = async (customerId: string) => {
    const ids = (await carts(customerId)).map((c) => c.id);
    if (ids.length === 0) return [];
    return p.ctx.db.selectFrom('cart_items').select('id').where('cart_id', 'in', ids).execute();
  };

  it('registers a user: 201 with the profile, and the user has one empty cart', async () => {
    expect(await carts('u_new')).toHaveLength(0);
    const res = await register(
      registration('u_new', { onboarding: { status: 'started', startedAt: 'now' } }),
    );
    expect(res.statusCode, res.body).toBe(201);
    const profile = res.json() as Profile;
    expect(profile).toEqual({
      userId: 'u_new',
      displayName: 'User u_new',
      email: 'u_new@example.com',
      preferences: { categories: [], moods: [], dislikedNotes: [], occasions: [] },
      registrationSource: 'storefront',
      createdAt: expect.any(String),
      updatedAt: profile.createdAt,
    });
    expect(await carts('u_new')).toHaveLength(1);
    expect(await cartItems('u_new')).toHaveLength(0);
    expect((await getProfile('u_new')).json()).toEqual(profile);
  });

  it('the same userId again: 200 with the stored profile, whatever the body, and nothing changes', async () => {
    const first = (await register(registration('u_again'))).json() as Profile;
    p.clock.advance(5);
    const again = await register(
      registration('u_again', {
        email: 'other@example.com',
        name: 'Someone Else',
        preferences: { moods: ['cozy'] },
      }),
    );
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toEqual(first);
    expect((await getProfile('u_again')).json()).toEqual(first);
    expect(await carts('u_again')).toHaveLength(1);
  });

  it('concurrent registrations of one user: one 201, the rest 200 with the same profile, one cart', async () => {
    const all = await Promise.all(
      Array.from({ length: 6 }, (_, i) => register(registration('u_race', { name: `Racer ${i}` }))),
    );
    const statuses = all.map((r) => r.statusCode).sort();
    expect(statuses, all.map((r) => r.body).join('\n')).toEqual([200, 200, 200, 200, 200, 201]);
    const created = all.find((r) => r.statusCode === 201)?.json() as Profile;
    for (const r of all) expect(r.json()).toEqual(created);
    expect(await carts('u_race')).toHaveLength(1);
  });

  it('an existing cart is kept as it is', async () => {
    const cartToken = await p.request({
      method: 'POST',
      url: '/v1/auth/tokens',
      payload: { customerId: 'u_shopper', scopes: ['commerce:read', 'commerce:write'] },
    });
    const key = (cartToken.json() as { token: string }).token;
    const added = await p.request({
      method: 'POST',
      url: '/api/cart/items',
      key,
      payload: { productId: 'prod_candle_classic', variantId: 'var_candle_8oz', quantity: 1 },
    });
    expect(added.statusCode, added.body).toBe(200);
    expect((await register(registration('u_shopper'))).statusCode).toBe(201);
    expect(await carts('u_shopper')).toHaveLength(1);
    expect(await cartItems('u_shopper')).toHaveLength(1);
  });

  it('displayName is accepted for name; both must agree, one is required', async () => {
    const res = await register({ ...registration('u_dn'), name: undefined, displayName: 'Dee' });
    expect(res.statusCode, res.body).toBe(201);
    expect((res.json() as Profile).displayName).toBe('Dee');
    expect(fieldsOf(await register(registration('u_both', { displayName: 'Other' })))).toEqual([
      'displayName',
    ]);
    expect(fieldsOf(await register({ ...registration('u_none'), name: undefined }))).toEqual(['displayName']);
    expect((await getProfile('u_both')).statusCode).toBe(404);
  });

  it('400 for bad registration fields, each named; nothing is created', async () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [registration('u_bad', { email: 'not-an-email' }), 'email'],
      [registration('x'.repeat(101)), 'userId'],
      [registration(''), 'userId'],
      [registration('u_bad', { name: 'n'.repeat(201) }), 'name'],
      [registration('u_bad', { registrationSource: '' }), 'registrationSource'],
      [registration('u_bad', { admin: true }), 'admin'],
      [registration('u_bad', { preferences: { colours: ['red'] } }), 'colours'],
    ];
    for (const [body, field] of bad) {
      const res = await register(body);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.body).toContain(field);
    }
    const { userId: _, ...noUser } = registration('u_bad');
    expect((await register(noUser)).statusCode).toBe(400);
    expect((await getProfile('u_bad')).statusCode).toBe(404);
    expect(await carts('u_bad')).toHaveLength(0);
  });

  it('preferences are checked against the scent catalog, naming the field', async () => {
    const res = await register(
      registration('u_prefs_bad', {
        preferences: { categories: ['cat_woody', 'cat_nope'], moods: ['grumpy'], dislikedNotes: ['note_x'] },
      }),
    );
    expect(fieldsOf(res)).toEqual([
      'preferences.categories.1',
      'preferences.moods.0',
      'preferences.dislikedNotes.0',
    ]);
    expect(res.body).toContain('cat_citrus');
    expect((await getProfile('u_prefs_bad')).statusCode).toBe(404);

    const ok = await register(
      registration('u_prefs', {
        preferences: {
          categories: ['cat_woody', 'cat_woody'],
          moods: ['Cozy', 'cozy'],
          dislikedNotes: ['note_oud'],
          occasions: ['evening'],
        },
      }),
    );
    expect(ok.statusCode, ok.body).toBe(201);
    expect((ok.json() as Profile).preferences).toEqual({
      categories: ['cat_woody'],
      moods: ['cozy'],
      dislikedNotes: ['note_oud'],
      occasions: ['evening'],
    });
  });

  it('PATCH changes the fields sent; each preferences key sent replaces that list', async () => {
    const created = (
      await register(
        registration('u_patch', { preferences: { categories: ['cat_citrus'], moods: ['fresh'] } }),
      )
    ).json() as Profile;
    p.clock.advance(1);
    const res = await patchProfile('u_patch', {
      displayName: 'Pat',
      preferences: { moods: ['calming', 'clean'], occasions: ['office'] },
    });
    expect(res.statusCode, res.body).toBe(200);
    const patched = res.json() as Profile;
    expect(patched).toMatchObject({
      displayName: 'Pat',
      email: 'u_patch@example.com',
      preferences: {
        categories: ['cat_citrus'],
        moods: ['calming', 'clean'],
        dislikedNotes: [],
        occasions: ['office'],
      },
      createdAt: created.createdAt,
    });
    expect(patched.updatedAt > created.updatedAt).toBe(true);
    const cleared = (
      await patchProfile('u_patch', { email: 'pat@example.com', preferences: { categories: [] } })
    ).json() as Profile;
    expect(cleared).toMatchObject({
      email: 'pat@example.com',
      preferences: { categories: [], moods: ['calming', 'clean'] },
    });
    // Two changes within one millisecond still order.
    expect(cleared.updatedAt > patched.updatedAt).toBe(true);
    expect((await getProfile('u_patch')).json()).toEqual(cleared);
  });

  it('PATCH refuses bad values and changes nothing', async () => {
    const before = (await register(registration('u_patch_bad'))).json() as Profile;
    expect(
      fieldsOf(await patchProfile('u_patch_bad', { preferences: { categories: ['cat_nope'] } })),
    ).toEqual(['preferences.categories.0']);
    expect((await patchProfile('u_patch_bad', { email: 'nope' })).statusCode).toBe(400);
    expect((await patchProfile('u_patch_bad', { displayName: '' })).statusCode).toBe(400);
    expect((await patchProfile('u_patch_bad', { userId: 'u_other' })).statusCode).toBe(400);
    expect((await patchProfile('u_patch_bad', { preferences: { moods: 'cozy' } })).statusCode).toBe(400);
    expect((await getProfile('u_patch_bad')).json()).toEqual(before);
  });

  it('404 for a user with no profile on GET; the first PATCH creates it (201), the next changes it (200)', async () => {
    const got = await getProfile('u_ghost');
    expect(got.statusCode).toBe(404);
    expect(got.json()).toMatchObject({ error: true, code: 'PROFILE_NOT_FOUND' });

    const created = await patchProfile('u_ghost', { displayName: 'Boo', preferences: { moods: ['Fresh'] } });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({
      userId: 'u_ghost',
      displayName: 'Boo',
      email: '',
      registrationSource: 'profile-patch',
      preferences: { categories: [], moods: ['fresh'], dislikedNotes: [], occasions: [] },
    });
    expect((await getProfile('u_ghost')).json()).toEqual(created.json());
    // A registration's cart comes with it.
    expect(await carts('u_ghost')).toHaveLength(1);

    const changed = await patchProfile('u_ghost', { email: 'boo@example.com' });
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).toMatchObject({ displayName: 'Boo', email: 'boo@example.com' });

    // With nothing sent, the userId is the name; a registration afterwards changes nothing.
    const bare = await patchProfile('u_bare', {});
    expect(bare.statusCode).toBe(201);
    expect(bare.json()).toMatchObject({ displayName: 'u_bare', email: '' });
    expect((await register(registration('u_bare'))).statusCode).toBe(200);
  });

  it('a first PATCH with bad values creates nothing; concurrent first PATCHes make one profile', async () => {
    expect(
      fieldsOf(await patchProfile('u_bad_first', { preferences: { categories: ['cat_nope'] } })),
    ).toEqual(['preferences.categories.0']);
    expect((await patchProfile('u_bad_first', { email: 'nope' })).statusCode).toBe(400);
    expect((await getProfile('u_bad_first')).statusCode).toBe(404);

    const answers = await Promise.all(
      ['a', 'b', 'c', 'd'].map((n) => patchProfile('u_patch_race', { preferences: { occasions: [n] } })),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 200, 200, 201]);
    const stored = (await getProfile('u_patch_race')).json() as Profile;
    expect(stored.preferences.occasions).toHaveLength(1);
    expect(await carts('u_patch_race')).toHaveLength(1);
  });

  it('a customer token reads and changes its own profile only; others are 404 like a missing one', async () => {
    await register(registration('u_alice'));
    await register(registration('u_bob'));
    const alice = await token('u_alice');
    expect((await getProfile('u_alice', alice)).statusCode).toBe(200);
    const patched = await patchProfile('u_alice', { preferences: { occasions: ['date night'] } }, alice);
    expect(patched.statusCode, patched.body).toBe(200);

    const bobs = await getProfile('u_bob', alice);
    const missing = await getProfile('u_nobody', alice);
    expect(bobs.statusCode).toBe(404);
    expect(missing.statusCode).toBe(404);
    // The same answer as for a user with no profile: whether Bob exists is not told.
    expect(bobs.json()).toMatchObject({
      code: 'PROFILE_NOT_FOUND',
      message: "User profile 'u_bob' was not found",
    });
    expect(missing.json()).toMatchObject({
      code: 'PROFILE_NOT_FOUND',
      message: "User profile 'u_nobody' was not found",
    });
    expect((await patchProfile('u_bob', { displayName: 'Mallory' }, alice)).statusCode).toBe(404);
    expect(((await getProfile('u_bob')).json() as Profile).displayName).toBe('User u_bob');
  });

  it('customer tokens may not register users, and need the scope of the operation', async () => {
    const alice = await token('u_alice2');
    const res = await register(registration('u_alice2'), alice);
    expect(res.statusCode).toBe(403);
    expect((await getProfile('u_alice2')).statusCode).toBe(404);

    await register(registration('u_reader'));
    const reader = await token('u_reader', ['agent:read']);
    expect((await getProfile('u_reader', reader)).statusCode).toBe(200);
    expect((await patchProfile('u_reader', { displayName: 'R' }, reader)).statusCode).toBe(403);
    const shopper = await token('u_reader', ['commerce:read']);
    expect((await getProfile('u_reader', shopper)).statusCode).toBe(403);
  });

  it('keys need the agent service and its scopes; another account sees none of these profiles', async () => {
    await register(registration('u_keys'));
    const commerceOnly = await p.createKey({
      name: 'commerce only',
      type: 'production',
      role: 'Admin',
      services: ['commerce'],
    });
    expect((await getProfile('u_keys', commerceOnly.key)).statusCode).toBe(403);
    expect((await register(registration('u_keys2'), commerceOnly.key)).statusCode).toBe(403);
    const reader = await p.createKey({
      name: 'reader',
      type: 'production',
      role: 'Reader',
      services: ['agent'],
    });
    expect((await getProfile('u_keys', reader.key)).statusCode).toBe(200);
    expect((await register(registration('u_keys2'), reader.key)).statusCode).toBe(403);
    expect((await patchProfile('u_keys', { displayName: 'K' }, reader.key)).statusCode).toBe(403);

    const other = await otherAccountKey(p);
    expect((await getProfile('u_keys', other)).statusCode).toBe(404);
    // The same userId in another account is another user: its PATCH makes that account's own.
    expect((await patchProfile('u_keys', { displayName: 'X' }, other)).statusCode).toBe(201);
    expect((await register(registration('u_keys'), other)).statusCode).toBe(200);
    expect((await getProfile('u_keys')).json()).toMatchObject({
      displayName: 'User u_keys',
      email: 'u_keys@example.com',
    });
  });

  it('401 without a credential', async () => {
    expect((await p.request({ method: 'GET', url: '/api/users/u_new/profile', key: null })).statusCode).toBe(
      401,
    );
    expect(
      (await p.request({ method: 'POST', url: '/api/users', payload: registration('u_anon'), key: null }))
        .statusCode,
    ).toBe(401);
  });

  it('ctx.apis.profiles.get gives the profile or null', async () => {
    await register(registration('u_api', { preferences: { moods: ['cozy'] } }));
    const api = p.ctx.apis.profiles;
    expect(await api?.get(p.accountId, 'u_api')).toMatchObject({
      userId: 'u_api',
      preferences: { moods: ['cozy'] },
    });
    expect(await api?.get(p.accountId, 'u_nobody')).toBeNull();
    expect(await api?.get('acct_other', 'u_api')).toBeNull();
  });
});
