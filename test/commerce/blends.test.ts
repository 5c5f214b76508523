import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authSuite } from '../helpers/auth-suite.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { commercePlatform, customerToken, expectError, validBlend } from './support.js';

describe.each(await testDialects())('custom blends on %s', (dialect) => {
  let p: TestPlatform;
  let alice: string;
  let bob: string;
  let readOnly: string;
  beforeAll(async () => {
    p = await commercePlatform(dialect);
    alice = await customerToken(p, 'cust_alice');
    bob = await customerToken(p, 'cust_bob');
    readOnly = await customerToken(p, 'cust_alice', ['commerce:read']);
  });
  afterAll(async () => {
    await p.close();
  });

  const create = (key: string, body: unknown) =>
    p.request({ method: 'POST', url: '/api/custom-blends', key, payload: body as object });

  it('creates a blend with every field of the spec', async () => {
    const res = await create(alice, validBlend('Morning Garden'));
    expect(res.statusCode).toBe(201);
    const blend = res.json();
    expect(blend.id).toMatch(/^blend_/);
    expect(blend).toMatchObject({
      name: 'Morning Garden',
      description: 'Bright and woody',
      isPublic: false,
      isOwner: true,
      composition: {
        baseIntensity: 'medium',
        notes: [
          { id: 'note_bergamot', name: 'Bergamot', ratio: 0.25, category: 'Citrus', volatility: 'top' },
          { id: 'note_rose', name: 'Rose', ratio: 0.4, category: 'Floral', volatility: 'middle' },
          { id: 'note_sandalwood', name: 'Sandalwood', ratio: 0.35, category: 'Woody', volatility: 'base' },
        ],
      },
      profile: { categories: ['Floral', 'Woody', 'Citrus'], occasions: ['evening'] },
      usedIn: [],
    });
    expect(blend.profile.mood.length).toBeGreaterThan(0);
    expect(blend.createdAt).toBe(blend.updatedAt);
    const analysis = blend.expert_analysis;
    expect(analysis.pyramid).toEqual({ top: 0.25, heart: 0.4, base: 0.35 });
    expect(analysis.notes).toContain('Bergamot');
    expect(typeof analysis.longevity).toBe('string');
    expect(typeof analysis.sillage).toBe('string');
    expect(analysis.recommendations.length).toBeGreaterThan(0);
    expect(blend.compatibleProducts.length).toBeGreaterThan(0);
    for (const cp of blend.compatibleProducts) {
      expect(cp.compatibilityScore).toBeGreaterThanOrEqual(0);
      expect(cp.compatibilityScore).toBeLessThanOrEqual(1);
      expect(cp.image).toMatch(/^http/);
    }
  });

  it('reads percentages as fractions and advises on note count and pyramid', async () => {
    const res = await create(alice, {
      name: 'Solo',
      composition: {
        notes: [
          { id: 'note_lemon', ratio: 60 },
          { id: 'note_lime', ratio: 40 },
        ],
      },
    });
    expect(res.statusCode).toBe(201);
    const blend = res.json();
    expect(blend.composition.notes.map((n: { ratio: number }) => n.ratio)).toEqual([0.6, 0.4]);
    expect(blend.composition.baseIntensity).toBe('medium');
    const advice = blend.expert_analysis.recommendations.join(' ');
    expect(advice).toMatch(/3 to 7 notes/);
    expect(advice).toMatch(/Top notes make up 100%/);
    expect(advice).toMatch(/Base notes make up 0%/);
    const many = await create(alice, {
      name: 'Crowded',
      composition: {
        notes: ['bergamot', 'lemon', 'rose', 'jasmine', 'iris', 'violet', 'sandalwood', 'vetiver'].map(
          (id) => ({ id: `note_${id}`, ratio: 0.125 }),
        ),
      },
    });
    expect(many.statusCode).toBe(201);
    expect(many.json().expert_analysis.recommendations.join(' ')).toMatch(/With 8 notes/);
  });

  it('validates compositions: count, duplicates, ratios, unknown notes, sums', async () => {
    const notes = (list: Array<[string, number]>) => ({
      name: `v ${Math.random()}`,
      composition: { notes: list.map(([id, ratio]) => ({ id, ratio })) },
    });
    expectError(await create(alice, notes([])), 400, 'VALIDATION_ERROR');
    const sixteen = Array.from({ length: 16 }, (_, i) => [`note_${i}`, 1 / 16] as [string, number]);
    expectError(await create(alice, notes(sixteen)), 400, 'VALIDATION_ERROR');
    const dup = expectError(
      await create(
        alice,
        notes([
          ['note_rose', 0.5],
          ['note_rose', 0.5],
        ]),
      ),
      400,
      'VALIDATION_ERROR',
    );
    expect(JSON.stringify(dup.details)).toContain('appears twice');
    expectError(
      await create(
        alice,
        notes([
          ['note_rose', 0],
          ['note_oud', 1],
        ]),
      ),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await create(
        alice,
        notes([
          ['note_rose', -0.5],
          ['note_oud', 1.5],
        ]),
      ),
      400,
      'VALIDATION_ERROR',
    );
    const missing = expectError(
      await create(
        alice,
        notes([
          ['note_rose', 0.5],
          ['note_unicorn', 0.5],
        ]),
      ),
      404,
      'NOTE_NOT_FOUND',
    );
    expect(missing.message).toContain('note_unicorn');
    expect(missing.details).toMatchObject({ id: 'note_unicorn' });
    const sum = expectError(
      await create(
        alice,
        notes([
          ['note_rose', 0.5],
          ['note_oud', 0.4],
        ]),
      ),
      422,
      'INVALID_COMPOSITION',
    );
    expect((sum.details as { sum: number }).sum).toBeCloseTo(0.9);
    const pct = expectError(
      await create(
        alice,
        notes([
          ['note_rose', 50],
          ['note_oud', 40],
        ]),
      ),
      422,
      'INVALID_COMPOSITION',
    );
    expect((pct.details as { sum: number }).sum).toBe(90);
    expect(
      (
        await create(
          alice,
          notes([
            ['note_rose', 0.5],
            ['note_oud', 0.5000000001],
          ]),
        )
      ).statusCode,
    ).toBe(201);
    expectError(await create(alice, { ...validBlend('x'), name: '' }), 400, 'VALIDATION_ERROR');
    expectError(await create(alice, { ...validBlend('x'), name: 'n'.repeat(101) }), 400, 'VALIDATION_ERROR');
    expectError(
      await create(
        alice,
        validBlend('bad intensity', {
          composition: { notes: [{ id: 'note_rose', ratio: 1 }], baseIntensity: 'extreme' },
        }),
      ),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await create(alice, validBlend('bad occasions', { profile: { occasions: [42] } })),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('keeps names unique per customer ignoring case', async () => {
    expect((await create(alice, validBlend('Unique Name'))).statusCode).toBe(201);
    const taken = expectError(await create(alice, validBlend('unique NAME')), 409, 'NAME_TAKEN');
    expect(taken.details).toMatchObject({ name: 'unique NAME' });
    expect((await create(bob, validBlend('Unique Name'))).statusCode).toBe(201);
  });

  it("lists only the customer's own blends", async () => {
    const own = (await p.request({ method: 'GET', url: '/api/custom-blends', key: bob })).json().blends;
    expect(own.map((b: { name: string }) => b.name)).toEqual(['Unique Name']);
    expect(own[0].expert_analysis).toBeUndefined();
    expect(own[0].usedIn).toEqual([]);
    const admin = (await p.request({ method: 'GET', url: '/api/custom-blends' })).json().blends;
    expect(admin).toEqual([]);
  });

  it('hides private blends of other customers and protects public ones from change', async () => {
    const priv = (await create(alice, validBlend('Private One'))).json();
    const pub = (await create(alice, validBlend('Public One', { isPublic: true }))).json();
    expectError(
      await p.request({ method: 'GET', url: `/api/custom-blends/${priv.id}`, key: bob }),
      404,
      'BLEND_NOT_FOUND',
    );
    expectError(
      await p.request({
        method: 'PATCH',
        url: `/api/custom-blends/${priv.id}`,
        key: bob,
        payload: { name: 'mine' },
      }),
      404,
      'BLEND_NOT_FOUND',
    );
    expectError(
      await p.request({ method: 'DELETE', url: `/api/custom-blends/${priv.id}`, key: bob }),
      404,
      'BLEND_NOT_FOUND',
    );
    const read = await p.request({ method: 'GET', url: `/api/custom-blends/${pub.id}`, key: bob });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ id: pub.id, isOwner: false, isPublic: true });
    expectError(
      await p.request({
        method: 'PATCH',
        url: `/api/custom-blends/${pub.id}`,
        key: bob,
        payload: { name: 'mine' },
      }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await p.request({ method: 'DELETE', url: `/api/custom-blends/${pub.id}`, key: bob }),
      403,
      'FORBIDDEN',
    );
    // The account's own key acts as another owner.
    expectError(
      await p.request({ method: 'GET', url: `/api/custom-blends/${priv.id}` }),
      404,
      'BLEND_NOT_FOUND',
    );
    // Another key of the same account acts as the account itself: it may read the public blend.
    const { key: otherAccountKey } = await p.createKey({
      name: 'shop 2',
      type: 'development',
      services: ['commerce'],
      role: 'Admin',
    });
    expect(
      (await p.request({ method: 'GET', url: `/api/custom-blends/${pub.id}`, key: otherAccountKey }))
        .statusCode,
    ).toBe(200);
    expectError(
      await p.request({ method: 'GET', url: '/api/custom-blends/blend_nope', key: alice }),
      404,
      'BLEND_NOT_FOUND',
    );
  });

  it('updates any field, moves updatedAt and re-derives the analysis', async () => {
    const blend = (await create(alice, validBlend('To Change'))).json();
    const res = await p.request({
      method: 'PATCH',
      url: `/api/custom-blends/${blend.id}`,
      key: alice,
      payload: {
        name: 'Changed',
        description: 'new',
        isPublic: true,
        composition: {
          notes: [
            { id: 'note_vanilla', ratio: 0.7 },
            { id: 'note_lime', ratio: 0.3 },
          ],
          baseIntensity: 'strong',
        },
        profile: { occasions: ['winter'] },
      },
    });
    expect(res.statusCode).toBe(200);
    const changed = res.json();
    expect(changed).toMatchObject({
      id: blend.id,
      name: 'Changed',
      description: 'new',
      isPublic: true,
      createdAt: blend.createdAt,
    });
    expect(changed.updatedAt > blend.updatedAt).toBe(true);
    expect(changed.composition.baseIntensity).toBe('strong');
    expect(changed.profile).toMatchObject({ categories: ['Gourmand', 'Citrus'], occasions: ['winter'] });
    expect(changed.expert_analysis.pyramid).toEqual({ top: 0.3, heart: 0, base: 0.7 });
    const partial = (
      await p.request({
        method: 'PATCH',
        url: `/api/custom-blends/${blend.id}`,
        key: alice,
        payload: { description: 'only this' },
      })
    ).json();
    expect(partial).toMatchObject({ name: 'Changed', description: 'only this', isPublic: true });
    expectError(
      await p.request({
        method: 'PATCH',
        url: `/api/custom-blends/${blend.id}`,
        key: alice,
        payload: { name: 'morning garden' },
      }),
      409,
      'NAME_TAKEN',
    );
    expectError(
      await p.request({
        method: 'PATCH',
        url: `/api/custom-blends/${blend.id}`,
        key: alice,
        payload: { composition: { notes: [{ id: 'note_rose', ratio: 0.3 }] } },
      }),
      422,
      'INVALID_COMPOSITION',
    );
    expectError(
      await p.request({ method: 'PATCH', url: `/api/custom-blends/${blend.id}`, key: alice, payload: {} }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await p.request({
        method: 'PATCH',
        url: '/api/custom-blends/blend_nope',
        key: alice,
        payload: { name: 'x' },
      }),
      404,
      'BLEND_NOT_FOUND',
    );
  });

  it('deletes a blend and refuses without the delete scope', async () => {
    const blend = (await create(alice, validBlend('To Delete'))).json();
    expectError(
      await p.request({ method: 'DELETE', url: `/api/custom-blends/${blend.id}`, key: readOnly }),
      403,
      'FORBIDDEN',
    );
    const res = await p.request({ method: 'DELETE', url: `/api/custom-blends/${blend.id}`, key: alice });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, message: expect.any(String), id: blend.id });
    expectError(
      await p.request({ method: 'GET', url: `/api/custom-blends/${blend.id}`, key: alice }),
      404,
      'BLEND_NOT_FOUND',
    );
    expectError(
      await p.request({ method: 'DELETE', url: `/api/custom-blends/${blend.id}`, key: alice }),
      404,
      'BLEND_NOT_FOUND',
    );
  });

  it('shows usage recorded by orders, and gives the cart the blends it may use', async () => {
    const blend = (await create(alice, validBlend('Ordered'))).json();
    const api = p.ctx.apis.commerce;
    if (!api) throw new Error('commerce api missing');
    const usage = {
      blendId: blend.id,
      productId: 'prod_candle_classic',
      productName: 'Classic Soy Candle',
      orderId: 'ord_1',
      orderDate: '2026-11-20T10:00:00.000Z',
      customerId: 'cust_alice',
    };
    await api.recordBlendUsage(p.accountId, usage);
    await api.recordBlendUsage(p.accountId, usage);
    // Another account's order naming this blend records nothing on it.
    await api.recordBlendUsage('acct_someone_else', { ...usage, orderId: 'ord_2' });
    const detail = (
      await p.request({ method: 'GET', url: `/api/custom-blends/${blend.id}`, key: alice })
    ).json();
    expect(detail.usedIn).toEqual([
      {
        productId: 'prod_candle_classic',
        productName: 'Classic Soy Candle',
        orderId: 'ord_1',
        orderDate: '2026-11-20T10:00:00.000Z',
      },
    ]);
    const listed = (await p.request({ method: 'GET', url: '/api/custom-blends', key: alice })).json().blends;
    expect(listed.find((b: { id: string }) => b.id === blend.id).usedIn).toHaveLength(1);
    expect((await api.getBlendForCustomer(p.accountId, 'cust_alice', blend.id))?.name).toBe('Ordered');
    expect(await api.getBlendForCustomer(p.accountId, 'cust_bob', blend.id)).toBeNull();
  });

  it('a customer keeps at most 1,000 blends: the next is a 409, and the list answers them all', async () => {
    const carol = await customerToken(p, 'cust_carol_many');
    const made = await create(carol, validBlend('Seed blend'));
    expect(made.statusCode).toBe(201);
    const { db } = p.ctx;
    const row = await db
      .selectFrom('blends')
      .selectAll()
      .where('id', '=', made.json().id)
      .executeTakeFirstOrThrow();
    for (let start = 1; start < 999; start += 250) {
      const rows = Array.from({ length: Math.min(250, 999 - start) }, (_, i) => ({
        ...row,
        id: `blend_seeded_${start + i}`,
        name: `Seeded ${start + i}`,
        name_key: `seeded ${start + i}`,
      }));
      await db.insertInto('blends').values(rows).execute();
    }
    expect((await create(carol, validBlend('The thousandth'))).statusCode).toBe(201);
    const over = await create(carol, validBlend('One too many'));
    expectError(over, 409, 'CONFLICT');
    expect(over.json().message).toMatch(/at most 1000 blends/);
    const list = await p.request({ method: 'GET', url: '/api/custom-blends', key: carol });
    expect(list.json().blends).toHaveLength(1_000);
    // Another customer of the account is not held by carol's blends.
    expect((await create(bob, validBlend('Bob still can'))).statusCode).toBe(201);
  });

  it('never routes the literal collections to the by-id route', async () => {
    for (const path of ['categories', 'notes', 'recommendations']) {
      const res = await p.request({ method: 'GET', url: `/api/custom-blends/${path}`, key: alice });
      expect(res.statusCode).toBe(200);
      expect(Object.keys(res.json())).toEqual([path]);
    }
  });

  describe('auth', () => {
    authSuite(() => p, { method: 'GET', url: '/api/custom-blends', service: 'commerce' });
    authSuite(() => p, {
      method: 'POST',
      url: '/api/custom-blends',
      service: 'commerce',
      payload: validBlend('auth suite'),
    });
  });
});
