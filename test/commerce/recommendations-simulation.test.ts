import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authSuite } from '../helpers/auth-suite.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { commercePlatform, customerToken, expectError, validBlend } from './support.js';

interface Rec {
  id: string;
  matchScore: number;
  composition: { notes: Array<{ id: string; ratio: number }>; baseIntensity: string };
  profile: { categories: string[]; mood: string[]; occasions: string[] };
  reasoning: string;
}

describe.each(await testDialects())('recommendations and test-product on %s', (dialect) => {
  let p: TestPlatform;
  let fan: string;
  let newcomer: string;
  let blendId: string;
  beforeAll(async () => {
    p = await commercePlatform(dialect);
    fan = await customerToken(p, 'cust_woody_fan');
    newcomer = await customerToken(p, 'cust_new');
    const body = {
      name: 'Forest',
      composition: {
        notes: [
          { id: 'note_cedarwood', ratio: 0.4 },
          { id: 'note_vetiver', ratio: 0.3 },
          { id: 'note_bergamot', ratio: 0.3 },
        ],
        baseIntensity: 'strong',
      },
      profile: { occasions: ['office'] },
    };
    const res = await p.request({ method: 'POST', url: '/api/custom-blends', key: fan, payload: body });
    blendId = res.json().id;
  });
  afterAll(async () => {
    await p.close();
  });

  const recs = async (key: string, query = ''): Promise<Rec[]> => {
    const res = await p.request({ method: 'GET', url: `/api/custom-blends/recommendations${query}`, key });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().recommendations;
  };
  const notesById = async () => {
    const all = (await p.request({ method: 'GET', url: '/api/custom-blends/notes', key: fan })).json()
      .notes as Array<{ id: string; mood: string[]; category: string; categoryId: string }>;
    return new Map(all.map((n) => [n.id, n]));
  };

  function expectValid(list: Rec[], notes: Map<string, unknown>) {
    expect(list.length).toBeGreaterThan(0);
    for (const r of list) {
      const sum = r.composition.notes.reduce((a, n) => a + n.ratio, 0);
      expect(Math.abs(sum - 1)).toBeLessThan(1e-6);
      expect(new Set(r.composition.notes.map((n) => n.id)).size).toBe(r.composition.notes.length);
      for (const n of r.composition.notes) expect(notes.has(n.id)).toBe(true);
      expect(r.matchScore).toBeGreaterThanOrEqual(0);
      expect(r.matchScore).toBeLessThanOrEqual(1);
      expect(r.reasoning.length).toBeGreaterThan(20);
    }
  }

  it('builds on the customer history, deterministically', async () => {
    const notes = await notesById();
    const first = await recs(fan);
    expectValid(first, notes);
    expect(first[0]?.profile.categories).toContain('Woody');
    expect(first[0]?.reasoning).toMatch(/Woody makes up \d+% of the notes in your blends/);
    expect(first[0]?.composition.baseIntensity).toBe('strong');
    expect(first[0]?.profile.occasions).toEqual(['office']);
    expect(await recs(fan)).toEqual(first);
    const sorted = [...first].sort((a, b) => b.matchScore - a.matchScore);
    expect(first.map((r) => r.matchScore)).toEqual(sorted.map((r) => r.matchScore));
  });

  it('gives a newcomer well-balanced starters', async () => {
    const starters = await recs(newcomer);
    expectValid(starters, await notesById());
    expect(starters.every((r) => r.reasoning.startsWith('A well-balanced starter'))).toBe(true);
  });

  it('honours category, mood and occasion filters', async () => {
    const notes = await notesById();
    const gourmand = await recs(fan, '?category=cat_gourmand&mood=cozy&occasion=date%20night');
    expectValid(gourmand, notes);
    for (const r of gourmand) {
      expect(r.profile.categories).toContain('Gourmand');
      expect(r.profile.mood).toContain('cozy');
      expect(r.profile.occasions).toEqual(['date night']);
      expect(
        r.composition.notes.some((n) => (notes.get(n.id) as { mood: string[] }).mood.includes('cozy')),
      ).toBe(true);
      expect(r.reasoning).toContain('date night');
    }
    const badCategory = expectError(
      await p.request({
        method: 'GET',
        url: '/api/custom-blends/recommendations?category=cat_plastic',
        key: fan,
      }),
      400,
      'VALIDATION_ERROR',
    );
    expect(JSON.stringify(badCategory.details)).toContain('cat_woody');
    const badMood = expectError(
      await p.request({ method: 'GET', url: '/api/custom-blends/recommendations?mood=grumpy', key: fan }),
      400,
      'VALIDATION_ERROR',
    );
    expect(JSON.stringify(badMood.details)).toContain('cozy');
  });

  it('simulates a blend in a candle and in other products', async () => {
    const res = await p.request({
      method: 'POST',
      url: `/api/custom-blends/${blendId}/test-product`,
      key: fan,
      payload: {
        productId: 'prod_candle_classic',
        variantId: 'var_candle_8oz',
        intensity: 'medium',
        environment: 'living-room',
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const result = res.json();
    expect(result).toMatchObject({ productName: 'Classic Soy Candle', blendName: 'Forest' });
    expect(result.compatibility.score).toBeGreaterThan(0);
    expect(result.compatibility.score).toBeLessThanOrEqual(1);
    // 227 g of soy wax at 7 g/h: about 32 hours, ±10 %.
    expect(result.performance.burnTime).toBe('29–36 hours (8 oz tumbler)');
    expect(['light', 'moderate', 'strong', 'very strong']).toContain(result.performance.throwStrength);
    expect(result.recommendations).toEqual({
      intensityAdjustment: expect.any(String),
      notesBalance: expect.any(String),
      usage: expect.any(String),
    });
    expect(result.visualization.colorPalette.length).toBeGreaterThan(1);
    for (const c of result.visualization.colorPalette) expect(c).toMatch(/^#[0-9A-F]{6}$/);
    expect(result.visualization.colorPalette[1]).toBe('#8B5E3C');
    expect(result.visualization.moodImages.length).toBeGreaterThan(0);
    for (const productId of ['prod_reed_diffuser', 'prod_room_spray', 'prod_eau_de_parfum']) {
      const other = await p.request({
        method: 'POST',
        url: `/api/custom-blends/${blendId}/test-product`,
        key: fan,
        payload: { productId, intensity: 'light', environment: 'bedroom' },
      });
      expect(other.statusCode).toBe(200);
      expect(other.json().performance.burnTime).toMatch(/weeks|sprays|hours/);
    }
  });

  it('rejects unknown blends, products and values outside the lists', async () => {
    const send = (id: string, payload: object, key = fan) =>
      p.request({ method: 'POST', url: `/api/custom-blends/${id}/test-product`, key, payload });
    const ok = { productId: 'prod_candle_classic', intensity: 'medium', environment: 'bedroom' };
    expectError(await send('blend_nope', ok), 404, 'BLEND_NOT_FOUND');
    expectError(await send(blendId, ok, newcomer), 404, 'BLEND_NOT_FOUND');
    expectError(await send(blendId, { ...ok, productId: 'prod_nope' }), 404, 'PRODUCT_NOT_FOUND');
    expectError(await send(blendId, { ...ok, variantId: 'var_edp_30ml' }), 404, 'PRODUCT_NOT_FOUND');
    expectError(await send(blendId, { ...ok, intensity: 'nuclear' }), 400, 'VALIDATION_ERROR');
    expectError(await send(blendId, { ...ok, environment: 'moon' }), 400, 'VALIDATION_ERROR');
    expectError(await send(blendId, { productId: 'prod_candle_classic' }), 400, 'VALIDATION_ERROR');
  });

  it('lets any customer simulate a public blend', async () => {
    const pub = (
      await p.request({
        method: 'POST',
        url: '/api/custom-blends',
        key: fan,
        payload: validBlend('Shared', { isPublic: true }),
      })
    ).json();
    const res = await p.request({
      method: 'POST',
      url: `/api/custom-blends/${pub.id}/test-product`,
      key: newcomer,
      payload: { productId: 'prod_room_spray', intensity: 'strong', environment: 'bathroom' },
    });
    expect(res.statusCode).toBe(200);
  });

  describe('auth', () => {
    authSuite(() => p, { method: 'GET', url: '/api/custom-blends/recommendations', service: 'commerce' });
    authSuite(() => p, {
      method: 'POST',
      url: '/api/custom-blends/blend_nope/test-product',
      service: 'commerce',
      payload: { productId: 'prod_candle_classic', intensity: 'medium', environment: 'bedroom' },
    });
  });
});
