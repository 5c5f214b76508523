import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authModule } from '../../src/modules/auth/index.js';
import { cartModule } from '../../src/modules/cart/index.js';
import { commerceModule } from '../../src/modules/commerce/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { profilesModule } from '../../src/modules/profiles/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';

interface Rec {
  name: string;
  composition: { notes: Array<{ id: string }> };
  profile: { categories: string[]; mood: string[]; occasions: string[] };
  reasoning: string;
}

/** `GET /api/custom-blends/recommendations` reads the customer's profile preferences. */
describe.each(await testDialects())('recommendations from profile preferences on %s', (dialect) => {
  let p: TestPlatform;
  let fan: string;
  let stranger: string;

  const token = async (customerId: string) => {
    const res = await p.request({
      method: 'POST',
      url: '/v1/auth/tokens',
      payload: { customerId, scopes: ['commerce:read', 'agent:read', 'agent:write'] },
    });
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { token: string }).token;
  };
  const recs = async (key: string, query = ''): Promise<Rec[]> => {
    const res = await p.request({ method: 'GET', url: `/api/custom-blends/recommendations${query}`, key });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { recommendations: Rec[] }).recommendations;
  };
  const noteIds = (list: Rec[]) => new Set(list.flatMap((r) => r.composition.notes.map((n) => n.id)));

  beforeAll(async () => {
    p = await createTestPlatform({
      dialect,
      modules: [authModule, healthModule, commerceModule, cartModule, profilesModule],
    });
    const res = await p.request({
      method: 'POST',
      url: '/api/users',
      payload: {
        userId: 'cust_gourmand',
        email: 'g@example.com',
        name: 'G',
        registrationSource: 'test',
        preferences: {
          categories: ['cat_gourmand'],
          moods: ['cozy'],
          dislikedNotes: ['note_almond', 'note_caramel'],
          occasions: ['evening'],
        },
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    fan = await token('cust_gourmand');
    stranger = await token('cust_no_profile');
  });
  afterAll(() => p?.close());

  it('a customer with a profile gets their families, moods and occasions, never a disliked note', async () => {
    const list = await recs(fan);
    expect(list.length).toBeGreaterThan(0);
    for (const r of list) {
      expect(r.name).toMatch(/^Gourmand & .* Cozy$/);
      expect(r.profile.occasions).toEqual(['evening']);
      expect(r.reasoning).toContain('Your profile says you like Gourmand');
    }
    expect(noteIds(list).has('note_almond')).toBe(false);
    expect(noteIds(list).has('note_caramel')).toBe(false);
    // Without the dislikes, a gourmand blend would use them: the profile is what keeps them out.
    const asked = await recs(stranger, '?category=cat_gourmand&mood=cozy');
    expect([...noteIds(asked)].some((id) => id === 'note_almond' || id === 'note_caramel')).toBe(true);
  });

  it('the query wins over the matching preference; dislikes still hold', async () => {
    const list = await recs(fan, '?category=cat_citrus&occasion=office');
    expect(list.length).toBeGreaterThan(0);
    for (const r of list) {
      expect(r.name).toMatch(/^Citrus & /);
      expect(r.profile.occasions).toEqual(['office']);
    }
    const gourmandPartners = await recs(fan, '?category=cat_amber');
    expect(noteIds(gourmandPartners).has('note_almond')).toBe(false);
  });

  it('a customer without a profile gets the starter families, as before', async () => {
    const names = (await recs(stranger)).map((r) => r.name);
    expect(names.some((n) => /^(Citrus|Floral|Woody|Aromatic)/.test(n))).toBe(true);
    expect(names.some((n) => n.startsWith('Gourmand'))).toBe(false);
  });

  it('a changed profile changes the next recommendations', async () => {
    const patched = await p.request({
      method: 'PATCH',
      url: '/api/users/cust_gourmand/profile',
      key: fan,
      payload: { preferences: { categories: ['cat_aquatic'], moods: [] } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const list = await recs(fan);
    expect(list.length).toBeGreaterThan(0);
    for (const r of list) expect(r.name).toMatch(/^Fresh\/Aquatic & .* Harmony$/);
    await p.request({
      method: 'PATCH',
      url: '/api/users/cust_gourmand/profile',
      key: fan,
      payload: { preferences: { categories: ['cat_gourmand'], moods: ['cozy'] } },
    });
  });

  it('CommerceApi.recommendationsFor answers what the route answers (the agents’ tool uses it)', async () => {
    const commerce = p.ctx.apis.commerce;
    if (!commerce) throw new Error('commerce module missing');
    const viaApi = await commerce.recommendationsFor(p.accountId, 'cust_gourmand', {});
    expect(JSON.parse(JSON.stringify(viaApi))).toEqual(await recs(fan));
    await expect(
      commerce.recommendationsFor(p.accountId, 'cust_gourmand', { mood: 'grumpy' }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
    // Another account's customer of the same id has no profile there.
    const elsewhere = await commerce.recommendationsFor('acct_elsewhere', 'cust_gourmand', {});
    expect(elsewhere.some((r) => r.name.startsWith('Gourmand'))).toBe(false);
  });
});
