import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedCatalog } from '../../src/modules/commerce/catalog-store.js';
import { authSuite } from '../helpers/auth-suite.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { commercePlatform, customerToken, expectError } from './support.js';

describe.each(await testDialects())('scent catalog and products on %s', (dialect) => {
  let p: TestPlatform;
  let token: string;
  beforeAll(async () => {
    p = await commercePlatform(dialect, { ASSET_BASE_URL: 'https://cdn.example.com/scents/' });
    token = await customerToken(p, 'cust_catalog');
  });
  afterAll(async () => {
    await p.close();
  });

  it('lists the fragrance families with every field', async () => {
    const res = await p.request({ method: 'GET', url: '/api/custom-blends/categories', key: token });
    expect(res.statusCode).toBe(200);
    const { categories } = res.json();
    const names = categories.map((c: { name: string }) => c.name);
    for (const family of [
      'Citrus',
      'Floral',
      'Fruity',
      'Green',
      'Fresh/Aquatic',
      'Aromatic/Herbal',
      'Spicy',
      'Woody',
      'Amber',
      'Gourmand',
      'Musk/Leather',
    ]) {
      expect(names).toContain(family);
    }
    expect(categories[0]).toEqual({
      id: 'cat_citrus',
      name: 'Citrus',
      description: expect.any(String),
      image: 'https://cdn.example.com/scents/categories/citrus.svg',
      mood: expect.stringMatching(/^[a-z]+(,[a-z]+)+$/),
      popularNotes: expect.arrayContaining(['Bergamot']),
      complementaryCategories: expect.arrayContaining(['cat_woody']),
    });
  });

  it('lists at least 60 notes, filters by category id and searches names and descriptions', async () => {
    const all = (await p.request({ method: 'GET', url: '/api/custom-blends/notes', key: token })).json()
      .notes;
    expect(all.length).toBeGreaterThanOrEqual(60);
    const ids = new Set(all.map((n: { id: string }) => n.id));
    for (const n of all) {
      expect(['light', 'medium', 'strong']).toContain(n.intensity);
      expect(['top', 'middle', 'base']).toContain(n.volatility);
      expect(n.mood.length).toBeGreaterThan(0);
      for (const c of n.complementaryNotes) expect(ids.has(c)).toBe(true);
    }
    const woody = (
      await p.request({ method: 'GET', url: '/api/custom-blends/notes?category=cat_woody', key: token })
    ).json().notes;
    expect(woody.length).toBeGreaterThan(3);
    expect(woody.every((n: { category: string }) => n.category === 'Woody')).toBe(true);
    const search = (
      await p.request({ method: 'GET', url: '/api/custom-blends/notes?searchTerm=BERGAMOT', key: token })
    ).json().notes;
    expect(search.map((n: { id: string }) => n.id)).toContain('note_bergamot');
    // Neroli's and lavender's descriptions do not say bergamot, but earl grey-like matches are by description too.
    const byDescription = (
      await p.request({ method: 'GET', url: '/api/custom-blends/notes?searchTerm=fougère', key: token })
    ).json().notes;
    expect(byDescription.map((n: { id: string }) => n.id)).toContain('note_lavender');
    const none = (
      await p.request({ method: 'GET', url: '/api/custom-blends/notes?category=cat_nope', key: token })
    ).json();
    expect(none.notes).toEqual([]);
  });

  it('lists products with the shared list parameters and gets one', async () => {
    // The catalogue API is for keys; a shopper's token is refused there (issue 19, item 2).
    expect((await p.request({ method: 'GET', url: '/v1/products', key: token })).statusCode).toBe(403);
    const res = await p.request({ method: 'GET', url: '/v1/products?limit=2', key: p.adminKey });
    expect(res.statusCode).toBe(200);
    const page = res.json();
    expect(page.data).toHaveLength(2);
    expect(page.nextCursor).toEqual(expect.any(String));
    const next = (
      await p.request({
        method: 'GET',
        url: `/v1/products?limit=2&cursor=${page.nextCursor}`,
        key: p.adminKey,
      })
    ).json();
    expect(next.data[0].id > page.data[1].id).toBe(true);
    const candles = (
      await p.request({ method: 'GET', url: '/v1/products?type=candle', key: p.adminKey })
    ).json().data;
    expect(candles.length).toBeGreaterThanOrEqual(2);
    expect(candles.every((c: { type: string }) => c.type === 'candle')).toBe(true);
    const types = new Set(
      (await p.request({ method: 'GET', url: '/v1/products?limit=100', key: p.adminKey }))
        .json()
        .data.map((x: { type: string }) => x.type),
    );
    expect([...types].sort()).toEqual(['candle', 'diffuser', 'perfume', 'room_spray']);
    const fields = (
      await p.request({ method: 'GET', url: '/v1/products?fields=name', key: p.adminKey })
    ).json().data[0];
    expect(Object.keys(fields).sort()).toEqual(['id', 'name']);
    expectError(
      await p.request({ method: 'GET', url: '/v1/products?sort=price', key: p.adminKey }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await p.request({ method: 'GET', url: '/v1/products?colour=red', key: p.adminKey }),
      400,
      'VALIDATION_ERROR',
    );

    const one = await p.request({ method: 'GET', url: '/v1/products/prod_candle_classic', key: p.adminKey });
    expect(one.statusCode).toBe(200);
    const candle = one.json();
    expect(candle.properties).toMatchObject({ waxType: 'soy', fragranceLoad: 0.08 });
    expect(candle.variants[1]).toMatchObject({
      id: 'var_candle_8oz',
      sku: 'CND-SOY-08',
      price: 32,
      stock: 80,
    });
    expect(candle.variants[1].properties.waxWeightGrams).toBe(227);
    expectError(
      await p.request({ method: 'GET', url: '/v1/products/prod_nope', key: p.adminKey }),
      404,
      'PRODUCT_NOT_FOUND',
    );
  });

  it('exposes products and variants to other modules', async () => {
    const api = p.ctx.apis.commerce;
    expect(await api?.getProduct('prod_nope')).toBeNull();
    const found = await api?.getVariant('var_diffuser_200ml');
    expect(found?.product.id).toBe('prod_reed_diffuser');
    expect(found?.variant).toMatchObject({ price: 5200, onHand: 35, reserved: 0 });
    expect(await api?.getVariant('var_nope')).toBeNull();
  });

  it('seeds idempotently, filling in only what is missing', async () => {
    const count = async () =>
      (
        await p.ctx.db
          .selectFrom('scent_notes')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n;
    const before = Number(await count());
    await p.ctx.db.deleteFrom('scent_notes').where('id', '=', 'note_oud').execute();
    await p.ctx.db
      .updateTable('product_variants')
      .set({ reserved: 3 })
      .where('id', '=', 'var_edp_30ml')
      .execute();
    await seedCatalog(p.ctx.db, new Date().toISOString());
    await seedCatalog(p.ctx.db, new Date().toISOString());
    expect(Number(await count())).toBe(before);
    const edp = (
      await p.request({ method: 'GET', url: '/v1/products/prod_eau_de_parfum', key: p.adminKey })
    ).json();
    expect(edp.variants[0]).toMatchObject({ id: 'var_edp_30ml', stock: 67 });
  });

  it('documents its routes in the OpenAPI document', async () => {
    const doc = (await p.request({ method: 'GET', url: '/openapi.json', key: null })).json();
    for (const path of [
      '/api/custom-blends',
      '/api/custom-blends/{blendId}',
      '/api/custom-blends/{blendId}/test-product',
      '/v1/products/{id}',
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
  });

  describe('auth', () => {
    authSuite(() => p, { method: 'GET', url: '/api/custom-blends/categories', service: 'commerce' });
    authSuite(() => p, { method: 'GET', url: '/v1/products', service: 'commerce' });
  });
});

describe('scent images served by the platform', () => {
  it('serves an SVG swatch for every image the catalog names, without auth', async () => {
    const p = await commercePlatform('sqlite');
    try {
      const token = await customerToken(p, 'cust_img');
      const { categories } = (
        await p.request({ method: 'GET', url: '/api/custom-blends/categories', key: token })
      ).json();
      const { notes } = (
        await p.request({ method: 'GET', url: '/api/custom-blends/notes', key: token })
      ).json();
      const urls = [...categories, ...notes].map((x: { image: string }) => x.image);
      expect(urls[0]).toMatch(/^http:\/\/localhost:\d+\/assets\/scents\/categories\/citrus\.svg$/);
      for (const url of urls) {
        const res = await p.request({ method: 'GET', url: new URL(url).pathname, key: null });
        expect(res.statusCode, url).toBe(200);
        expect(res.headers['content-type']).toContain('image/svg+xml');
      }
      expect(
        (await p.request({ method: 'GET', url: '/assets/scents/notes/unicorn.svg', key: null })).statusCode,
      ).toBe(404);
      expect(
        (await p.request({ method: 'GET', url: '/assets/scents/moods/cozy.svg', key: null })).statusCode,
      ).toBe(200);
    } finally {
      await p.close();
    }
  });
});
