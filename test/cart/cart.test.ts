import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authSuite } from '../helpers/auth-suite.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { CANDLE, cartPlatform, customer, setStock, TIN } from './support.js';

type Cart = {
  id: string;
  customerId: string;
  items: Array<{
    id: string;
    quantity: number;
    price: number;
    lineTotal: number;
    customizations: Record<string, unknown>;
  }>;
  itemCount: number;
  subtotal: number;
  discountTotal: number;
  estimatedTax: number;
  estimatedTotal: number;
  currency: string;
  notes: string;
  checkoutId: string | null;
  checkoutExpires: string | null;
  inventoryReserved: boolean;
  readyForCheckout: boolean;
};

describe.each(await testDialects())('cart on %s', (dialect) => {
  let p: TestPlatform;
  let ann = '';
  let bob = '';
  beforeAll(async () => {
    p = await cartPlatform(dialect, { GIFT_WRAP_FEE: '5', TAX_DEFAULT_RATE: '0.1' });
    ann = await customer(p, 'cust_ann');
    bob = await customer(p, 'cust_bob');
  });
  afterAll(() => p.close());

  const as = (key: string) => ({
    get: () => p.request({ method: 'GET', url: '/api/cart', key }),
    add: (payload: unknown) =>
      p.request({ method: 'POST', url: '/api/cart/items', key, payload: payload as object }),
    patch: (id: string, payload: unknown) =>
      p.request({ method: 'PATCH', url: `/api/cart/items/${id}`, key, payload: payload as object }),
    remove: (id: string) => p.request({ method: 'DELETE', url: `/api/cart/items/${id}`, key }),
    checkout: () => p.request({ method: 'POST', url: '/api/cart/checkout', key }),
  });

  it('makes one empty cart per customer on first use, with every field', async () => {
    const res = await as(ann).get();
    expect(res.statusCode).toBe(200);
    const cart = res.json() as Cart;
    expect(cart).toMatchObject({
      customerId: 'cust_ann',
      items: [],
      itemCount: 0,
      subtotal: 0,
      discounts: [],
      discountTotal: 0,
      estimatedTax: 0,
      estimatedTotal: 0,
      currency: 'USD',
      notes: '',
      inventoryReserved: false,
      readyForCheckout: false,
    });
    expect((await as(ann).get()).json()).toMatchObject({ id: cart.id });
    expect((await as(bob).get()).json()).not.toMatchObject({ id: cart.id });
  });

  it('adds items at catalogue prices, merges equal lines, totals with gift wrap and tax', async () => {
    const first = await as(ann).add({ ...CANDLE, quantity: 2, price: 0.01 });
    expect(first.statusCode).toBe(400); // no client prices
    await as(ann).add({ productId: CANDLE.productId, variantId: CANDLE.variantId, quantity: 2 });
    const merged = (
      await as(ann).add({ productId: CANDLE.productId, variantId: CANDLE.variantId, quantity: 1 })
    ).json() as Cart;
    expect(merged.items).toHaveLength(1);
    expect(merged.items[0]).toMatchObject({ quantity: 3, price: 32, lineTotal: 96 });
    const wrapped = (
      await as(ann).add({
        productId: TIN.productId,
        variantId: TIN.variantId,
        quantity: 1,
        customizations: { giftWrapped: true, giftMessage: 'Happy birthday' },
      })
    ).json() as Cart;
    expect(wrapped.items).toHaveLength(2);
    expect(wrapped.itemCount).toBe(4);
    expect(wrapped.subtotal).toBe(96 + 18 + 5);
    expect(wrapped.estimatedTax).toBeCloseTo(11.9, 2);
    expect(wrapped.estimatedTotal).toBeCloseTo(119 + 11.9, 2);
  });

  it('refuses bad input: unknown product or variant (404), bad quantity (400), long gift message (400)', async () => {
    expect((await as(ann).add({ productId: 'prod_nope', variantId: 'v', quantity: 1 })).statusCode).toBe(404);
    expect(
      (await as(ann).add({ productId: CANDLE.productId, variantId: 'var_nope', quantity: 1 })).statusCode,
    ).toBe(404);
    for (const quantity of [0, 100, 1.5, '2']) {
      const res = await as(ann).add({ productId: CANDLE.productId, variantId: CANDLE.variantId, quantity });
      expect(res.statusCode, String(quantity)).toBe(400);
    }
    const long = await as(ann).add({
      productId: CANDLE.productId,
      variantId: CANDLE.variantId,
      quantity: 1,
      customizations: { giftMessage: 'x'.repeat(501) },
    });
    expect(long.statusCode).toBe(400);
    expect((await as(ann).add({})).json()).toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('fills fragranceName from a blend the customer may use; another customer’s private blend → 404', async () => {
    const blend = await p.request({
      method: 'POST',
      url: '/api/custom-blends',
      key: bob,
      payload: {
        name: 'Bob private',
        composition: {
          notes: [
            { id: 'note_bergamot', ratio: 0.3 },
            { id: 'note_rose', ratio: 0.4 },
            { id: 'note_sandalwood', ratio: 0.3 },
          ],
          baseIntensity: 'medium',
        },
      },
    });
    expect(blend.statusCode).toBe(201);
    const blendId = (blend.json() as { id: string }).id;
    const mine = (
      await as(bob).add({
        productId: TIN.productId,
        variantId: TIN.variantId,
        quantity: 1,
        customizations: { fragranceId: blendId },
      })
    ).json() as Cart;
    expect(mine.items[0]?.customizations).toMatchObject({
      fragranceId: blendId,
      fragranceName: 'Bob private',
    });
    const theirs = await as(ann).add({
      productId: TIN.productId,
      variantId: TIN.variantId,
      quantity: 1,
      customizations: { fragranceId: blendId },
    });
    expect(theirs.statusCode).toBe(404);
  });

  it('PATCH and DELETE items; another customer’s item → 404', async () => {
    const cart = (await as(ann).get()).json() as Cart;
    const item = cart.items[0] as Cart['items'][number];
    const patched = await as(ann).patch(item.id, { quantity: 5 });
    expect(patched.statusCode).toBe(200);
    expect((patched.json() as Cart).items.find((i) => i.id === item.id)?.quantity).toBe(5);
    expect((await as(bob).patch(item.id, { quantity: 1 })).statusCode).toBe(404);
    expect((await as(bob).remove(item.id)).statusCode).toBe(404);
    expect((await as(ann).patch(item.id, {})).statusCode).toBe(400);
    expect((await as(ann).patch('item_nope', { quantity: 1 })).statusCode).toBe(404);
    const removed = (await as(ann).remove(item.id)).json() as Cart;
    expect(removed.items.find((i) => i.id === item.id)).toBeUndefined();
  });

  it('removing an item takes a write or a delete scope; read alone → 403', async () => {
    const token = async (customerId: string, scopes: string[]) => {
      const res = await p.request({
        method: 'POST',
        url: '/v1/auth/tokens',
        payload: { customerId, scopes },
      });
      return (res.json() as { token: string }).token;
    };
    const deleter = await token('cust_del', ['commerce:read', 'commerce:delete']);
    const reader = await token('cust_del', ['commerce:read']);
    const writer = await token('cust_del', ['commerce:read', 'commerce:write']);
    const added = await as(writer).add({
      productId: CANDLE.productId,
      variantId: CANDLE.variantId,
      quantity: 1,
    });
    expect(added.statusCode).toBe(200);
    const [first] = (added.json() as Cart).items;
    const refused = await as(reader).remove(first?.id ?? '');
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({
      code: 'FORBIDDEN',
      details: { acceptedScopes: ['commerce:write', 'commerce:delete'] },
    });
    const removed = await as(deleter).remove(first?.id ?? '');
    expect(removed.statusCode).toBe(200);
    expect((removed.json() as Cart).items).toEqual([]);
  });

  it('notes up to 1,000 characters', async () => {
    const ok = await p.request({
      method: 'POST',
      url: '/api/cart/notes',
      key: ann,
      payload: { note: 'Leave at door' },
    });
    expect((ok.json() as Cart).notes).toBe('Leave at door');
    const long = await p.request({
      method: 'POST',
      url: '/api/cart/notes',
      key: ann,
      payload: { note: 'x'.repeat(1001) },
    });
    expect(long.statusCode).toBe(400);
  });

  it('more than the available stock → 409 OUT_OF_STOCK with what is available', async () => {
    await setStock(p, 'var_pillar_3x6', 3);
    const res = await as(bob).add({
      productId: 'prod_candle_beeswax_pillar',
      variantId: 'var_pillar_3x6',
      quantity: 4,
    });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'OUT_OF_STOCK', details: { available: 3, requested: 4 } });
  });

  it('checkout reserves every line, renews, and a change releases the reservation', async () => {
    const key = await customer(p, 'cust_checkout');
    const c = as(key);
    expect((await c.checkout()).statusCode).toBe(422);
    await setStock(p, 'var_pillar_3x4', 10);
    await c.add({ productId: 'prod_candle_beeswax_pillar', variantId: 'var_pillar_3x4', quantity: 4 });
    await c.add({
      productId: 'prod_candle_beeswax_pillar',
      variantId: 'var_pillar_3x4',
      quantity: 2,
      customizations: { giftWrapped: true },
    });
    const res = await c.checkout();
    expect(res.statusCode).toBe(200);
    const cart = res.json() as Cart;
    expect(cart).toMatchObject({ inventoryReserved: true, readyForCheckout: true });
    expect(cart.checkoutId).toMatch(/^chk_/);
    const level = (await p.request({ method: 'GET', url: '/v1/inventory/var_pillar_3x4' })).json();
    expect(level).toEqual({ variantId: 'var_pillar_3x4', onHand: 10, reserved: 6, available: 4 });
    const renewed = (await c.checkout()).json() as Cart;
    expect(renewed.checkoutId).not.toBe(cart.checkoutId);
    expect((await p.request({ method: 'GET', url: '/v1/inventory/var_pillar_3x4' })).json()).toMatchObject({
      reserved: 6,
    });
    const changed = (await c.patch(cart.items[0]?.id as string, { quantity: 1 })).json() as Cart;
    expect(changed).toMatchObject({ readyForCheckout: false, inventoryReserved: false, checkoutId: null });
    expect((await p.request({ method: 'GET', url: '/v1/inventory/var_pillar_3x4' })).json()).toMatchObject({
      reserved: 0,
    });
  });

  it('a shortage on any line reserves nothing and names the lines', async () => {
    const key = await customer(p, 'cust_short');
    const c = as(key);
    await setStock(p, 'var_candle_22oz', 5);
    await setStock(p, 'var_candle_14oz', 5);
    await c.add({ productId: 'prod_candle_triple_wick', variantId: 'var_candle_22oz', quantity: 2 });
    await c.add({ productId: 'prod_candle_classic', variantId: 'var_candle_14oz', quantity: 5 });
    await setStock(p, 'var_candle_14oz', 4);
    const res = await c.checkout();
    expect(res.statusCode).toBe(409);
    const lines = (res.json() as { details: { lines: Array<{ variantId: string; available: number }> } })
      .details.lines;
    expect(lines).toEqual([expect.objectContaining({ variantId: 'var_candle_14oz', available: 4 })]);
    expect((await p.request({ method: 'GET', url: '/v1/inventory/var_candle_22oz' })).json()).toMatchObject({
      reserved: 0,
    });
  });

  it('an expired reservation is released on read and by the sweep', async () => {
    const key = await customer(p, 'cust_expire');
    const c = as(key);
    await setStock(p, 'var_diffuser_100', 10).catch(() => undefined);
    await setStock(p, 'var_pillar_3x4', 10);
    await c.add({ productId: 'prod_candle_beeswax_pillar', variantId: 'var_pillar_3x4', quantity: 3 });
    await c.checkout();
    expect((await p.request({ method: 'GET', url: '/v1/inventory/var_pillar_3x4' })).json()).toMatchObject({
      reserved: 3,
    });
    p.clock.advance(16 * 60);
    const cart = (await c.get()).json() as Cart;
    expect(cart).toMatchObject({ readyForCheckout: false, checkoutId: null });
    expect((await p.request({ method: 'GET', url: '/v1/inventory/var_pillar_3x4' })).json()).toMatchObject({
      reserved: 0,
    });
  });

  it('the sweep releases expired reservations without anyone reading the cart', async () => {
    const key = await customer(p, 'cust_sweep');
    await setStock(p, 'var_pillar_3x6', 10);
    await as(key).add({ productId: 'prod_candle_beeswax_pillar', variantId: 'var_pillar_3x6', quantity: 2 });
    const { checkoutId } = (await as(key).checkout()).json() as Cart;
    const sweep = p.ctx.apis.cart?.releaseExpiredReservations;
    expect(await sweep?.()).toEqual([]);
    p.clock.advance(16 * 60);
    expect(await sweep?.()).toContain(checkoutId);
    expect((await p.request({ method: 'GET', url: '/v1/inventory/var_pillar_3x6' })).json()).toMatchObject({
      reserved: 0,
    });
    expect(await sweep?.()).toEqual([]);
  });

  it('inventory is Admin only; onHand below reserved → 409; bad values → 400', async () => {
    expect(
      (await p.request({ method: 'GET', url: '/v1/inventory/var_pillar_3x4', key: ann })).statusCode,
    ).toBe(403);
    const writer = await p.createKey({
      name: 'w',
      type: 'production',
      role: 'Writer',
      services: ['commerce'],
    });
    expect(
      (
        await p.request({
          method: 'PUT',
          url: '/v1/inventory/var_pillar_3x4',
          key: writer.key,
          payload: { onHand: 5 },
        })
      ).statusCode,
    ).toBe(403);
    expect(
      (await p.request({ method: 'PUT', url: '/v1/inventory/var_nope', payload: { onHand: 5 } })).statusCode,
    ).toBe(404);
    expect(
      (await p.request({ method: 'PUT', url: '/v1/inventory/var_pillar_3x4', payload: { onHand: -1 } }))
        .statusCode,
    ).toBe(400);
    const key = await customer(p, 'cust_hold');
    await setStock(p, 'var_pillar_3x4', 10);
    await as(key).add({ productId: 'prod_candle_beeswax_pillar', variantId: 'var_pillar_3x4', quantity: 4 });
    await as(key).checkout();
    const below = await p.request({
      method: 'PUT',
      url: '/v1/inventory/var_pillar_3x4',
      payload: { onHand: 3 },
    });
    expect(below.statusCode).toBe(409);
  });

  describe('auth', () => {
    authSuite(() => p, { method: 'GET', url: '/api/cart', service: 'commerce' });
    authSuite(() => p, {
      method: 'POST',
      url: '/api/cart/items',
      service: 'commerce',
      payload: { productId: TIN.productId, variantId: TIN.variantId, quantity: 1 },
    });
    authSuite(() => p, {
      method: 'PATCH',
      url: '/api/cart/items/item_x',
      service: 'commerce',
      payload: { quantity: 1 },
    });
    authSuite(() => p, { method: 'POST', url: '/api/cart/checkout', service: 'commerce' });
    authSuite(() => p, {
      method: 'POST',
      url: '/api/cart/discounts',
      service: 'commerce',
      payload: { code: 'NOPE' },
    });
    authSuite(() => p, {
      method: 'POST',
      url: '/api/cart/shipping-estimates',
      service: 'commerce',
      payload: { address: { postalCode: '10115', country: 'DE' } },
    });
    authSuite(() => p, { method: 'GET', url: '/v1/inventory/var_candle_4oz', service: 'commerce' });
    authSuite(() => p, {
      method: 'POST',
      url: '/v1/discounts',
      service: 'commerce',
      weakRole: 'Writer',
      payload: { code: 'AUTHSUITE', type: 'percentage', value: 5 },
    });
  });
});
