import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { CANDLE, cartPlatform, customer, setStock } from './support.js';

type Cart = {
  subtotal: number;
  discounts: Array<{ code: string; type: string; value: number; amount: number; applies: boolean }>;
  discountTotal: number;
  estimatedTax: number;
  estimatedTotal: number;
};

describe.each(await testDialects())('discounts and shipping on %s', (dialect) => {
  let p: TestPlatform;
  const FRIDAY = '2026-11-20T15:00:00.000Z';
  beforeAll(async () => {
    p = await cartPlatform(dialect, { TAX_DEFAULT_RATE: '0.1' });
    p.clock.set(FRIDAY);
    await setStock(p, CANDLE.variantId, 500);
  });
  afterAll(() => p.close());

  const code = (payload: Record<string, unknown>) =>
    p.request({ method: 'POST', url: '/v1/discounts', payload });
  const cartOf = async (id: string, quantity: number) => {
    const key = await customer(p, id);
    await p.request({
      method: 'POST',
      url: '/api/cart/items',
      key,
      payload: { productId: CANDLE.productId, variantId: CANDLE.variantId, quantity },
    });
    return key;
  };
  const apply = (key: string, c: string) =>
    p.request({ method: 'POST', url: '/api/cart/discounts', key, payload: { code: c } });

  it('Admin manages codes; bad values → 400, duplicates → 409, non-Admin → 403', async () => {
    const res = await code({ code: 'TENOFF', type: 'percentage', value: 10, stackable: true });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      code: 'TENOFF',
      type: 'percentage',
      value: 10,
      usedCount: 0,
      stackable: true,
    });
    expect((await code({ code: 'tenoff', type: 'percentage', value: 5 })).statusCode).toBe(409);
    expect((await code({ code: 'BAD1', type: 'percentage', value: 150 })).statusCode).toBe(400);
    expect((await code({ code: 'BAD2', type: 'bogus', value: 1 })).statusCode).toBe(400);
    // Values are kept as given or refused, never rounded into another discount.
    for (const bad of [
      { code: 'PCT125', type: 'percentage', value: 12.5 },
      { code: 'PCT04', type: 'percentage', value: 0.4 },
      { code: 'FRAC', type: 'fixed_amount', value: 1.005 },
      { code: 'MINFRAC', type: 'fixed_amount', value: 1, minSubtotal: 10.001 },
    ]) {
      const res = await code(bad);
      expect(res.statusCode, bad.code).toBe(400);
      expect(res.json().details.fields[0].field).toBe(bad.code === 'MINFRAC' ? 'minSubtotal' : 'value');
    }
    expect((await code({ code: 'FIX199', type: 'fixed_amount', value: 1.99 })).json()).toMatchObject({
      value: 1.99,
    });
    const writer = await p.createKey({
      name: 'w',
      type: 'production',
      role: 'Writer',
      services: ['commerce'],
    });
    expect((await p.request({ method: 'GET', url: '/v1/discounts', key: writer.key })).statusCode).toBe(403);
    const list = (await p.request({ method: 'GET', url: '/v1/discounts' })).json() as {
      data: Array<{ code: string }>;
    };
    expect(list.data.map((d) => d.code)).toContain('TENOFF');
    await code({ code: 'FIVE', type: 'fixed_amount', value: 5, stackable: true });
    await code({ code: 'SOLO', type: 'percentage', value: 20, stackable: false });
    await code({ code: 'BIGSPEND', type: 'fixed_amount', value: 20, minSubtotal: 200 });
    await code({ code: 'OLD', type: 'percentage', value: 50, endsAt: '2026-01-01T00:00:00Z' });
    await code({ code: 'LATER', type: 'percentage', value: 50, startsAt: '2027-01-01T00:00:00Z' });
    await code({ code: 'ONCE', type: 'percentage', value: 5, usageLimit: 1 });
    await code({ code: 'SHIPFREE', type: 'free_shipping', value: 0, stackable: true });
  });

  it('applies codes ignoring case, stacks stackable ones, totals never above the subtotal', async () => {
    const key = await cartOf('d_ann', 2); // 64.00
    const one = (await apply(key, 'tenoff')).json() as Cart;
    expect(one.discounts).toEqual([expect.objectContaining({ code: 'TENOFF', amount: 6.4, applies: true })]);
    expect(one.discountTotal).toBe(6.4);
    expect(one.estimatedTax).toBeCloseTo(5.76, 2);
    expect(one.estimatedTotal).toBeCloseTo(64 - 6.4 + 5.76, 2);
    const two = (await apply(key, 'FIVE')).json() as Cart;
    expect(two.discountTotal).toBe(11.4);
    const again = (await apply(key, 'five')).json() as Cart;
    expect(again.discounts).toHaveLength(2);
    const solo = await apply(key, 'SOLO');
    expect(solo.statusCode).toBe(422);
    expect(solo.json()).toMatchObject({
      code: 'INVALID_DISCOUNT_CODE',
      details: { reason: 'not_combinable' },
    });
    const removed = await p.request({ method: 'DELETE', url: '/api/cart/discounts/five', key });
    expect((removed.json() as Cart).discountTotal).toBe(6.4);
    expect((await p.request({ method: 'DELETE', url: '/api/cart/discounts/FIVE', key })).statusCode).toBe(
      404,
    );
  });

  it('refuses unknown, expired, not yet valid, below-minimum and used-up codes with the reason', async () => {
    const key = await cartOf('d_bob', 1);
    const reasons: Record<string, string> = {
      NOPE: 'unknown',
      OLD: 'expired',
      LATER: 'not_started',
      BIGSPEND: 'minimum_not_met',
    };
    for (const [c, reason] of Object.entries(reasons)) {
      const res = await apply(key, c);
      expect(res.statusCode, c).toBe(422);
      expect(res.json()).toMatchObject({ code: 'INVALID_DISCOUNT_CODE', details: { reason } });
    }
    expect((await apply(key, 'ONCE')).statusCode).toBe(200);
    const checkout = (await p.request({ method: 'POST', url: '/api/cart/checkout', key })).json() as {
      checkoutId: string;
    };
    const order = await p.request({
      method: 'POST',
      url: '/v1/orders',
      payload: {
        id: 'disc-order-1',
        customer: { id: 'd_bob' },
        checkout_id: checkout.checkoutId,
        line_items: [
          { product_id: CANDLE.productId, variant_id: CANDLE.variantId, quantity: 1, price: '30.40' },
        ],
      },
    });
    expect(order.statusCode).toBe(201);
    const after = (await p.request({ method: 'GET', url: '/api/cart', key })).json() as {
      itemCount: number;
      discounts: unknown[];
    };
    expect(after).toMatchObject({ itemCount: 0, discounts: [] });
    const other = await cartOf('d_cat', 1);
    const used = await apply(other, 'ONCE');
    expect(used.json()).toMatchObject({ details: { reason: 'exhausted' } });
  });

  it('a code whose minimum stops holding stays on the cart with amount 0', async () => {
    const key = await cartOf('d_dan', 7); // 224.00
    expect((await apply(key, 'BIGSPEND')).statusCode).toBe(200);
    const cart = (await p.request({ method: 'GET', url: '/api/cart', key })).json() as Cart & {
      items: Array<{ id: string }>;
    };
    const shrunk = (
      await p.request({
        method: 'PATCH',
        url: `/api/cart/items/${cart.items[0]?.id}`,
        key,
        payload: { quantity: 1 },
      })
    ).json() as Cart;
    expect(shrunk.discounts).toEqual([
      expect.objectContaining({ code: 'BIGSPEND', amount: 0, applies: false }),
    ]);
    expect(shrunk.discountTotal).toBe(0);
  });

  describe('shipping estimates', () => {
    const estimate = (key: string, address: Record<string, unknown>) =>
      p.request({ method: 'POST', url: '/api/cart/shipping-estimates', key, payload: { address } });

    it('US contiguous: standard, express, overnight with business-day dates; the address sets the tax', async () => {
      const key = await cartOf('s_ann', 1); // 32.00, Friday
      const res = await estimate(key, { postalCode: '94103', country: 'us', state: 'ca' });
      expect(res.statusCode).toBe(200);
      const body = res.json() as {
        estimates: Array<{
          method: string;
          cost: number;
          estimatedDeliveryMin: string;
          estimatedDeliveryMax: string;
        }>;
        freeShippingEligible: boolean;
        freeShippingThreshold: number;
        amountToFreeShipping: number;
      };
      expect(body.estimates.map((e) => e.method)).toEqual(['standard', 'express', 'overnight']);
      // Friday + 1 business day = Monday; + 3..5 = Wed..Fri.
      expect(body.estimates.find((e) => e.method === 'overnight')).toMatchObject({
        estimatedDeliveryMin: '2026-11-23',
        estimatedDeliveryMax: '2026-11-23',
      });
      expect(body.estimates[0]).toMatchObject({
        estimatedDeliveryMin: '2026-11-25',
        estimatedDeliveryMax: '2026-11-27',
      });
      expect(body).toMatchObject({
        freeShippingEligible: false,
        freeShippingThreshold: 75,
        amountToFreeShipping: 43,
      });
      const cart = (await p.request({ method: 'GET', url: '/api/cart', key })).json() as Cart;
      expect(cart.estimatedTax).toBeCloseTo(32 * 0.0725, 2);
    });

    it('no overnight abroad or to Alaska; free standard shipping over the threshold or with a code', async () => {
      const key = await cartOf('s_bob', 3); // 96.00
      const de = (await estimate(key, { postalCode: '10115', country: 'DE' })).json() as {
        estimates: Array<{ method: string; cost: number }>;
        freeShippingEligible: boolean;
      };
      expect(de.estimates.map((e) => e.method)).toEqual(['standard', 'express']);
      expect(de.freeShippingEligible).toBe(true);
      expect(de.estimates[0]?.cost).toBe(0);
      const ak = (await estimate(key, { postalCode: '99501', country: 'US', state: 'AK' })).json() as {
        estimates: Array<{ method: string }>;
      };
      expect(ak.estimates.map((e) => e.method)).toEqual(['standard', 'express']);
      const small = await cartOf('s_cat', 1);
      await apply(small, 'SHIPFREE');
      const gb = (await estimate(small, { postalCode: 'SW1A 1AA', country: 'GB' })).json() as {
        freeShippingEligible: boolean;
      };
      expect(gb.freeShippingEligible).toBe(true);
    });

    it('checks the country, the postal code and the state', async () => {
      const key = await cartOf('s_dan', 1);
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ postalCode: '94103', country: 'XX' }, 'address.country'],
        [{ postalCode: '9410', country: 'US', state: 'CA' }, 'address.postalCode'],
        [{ postalCode: '94103', country: 'US' }, 'address.state'],
        [{ postalCode: '94103', country: 'US', state: 'ZZ' }, 'address.state'],
        [{ postalCode: 'K1A0B1', country: 'CA' }, 'address.state'],
        [{ postalCode: '123', country: 'CA', state: 'ON' }, 'address.postalCode'],
        [{ postalCode: 'NOPE 123', country: 'GB' }, 'address.postalCode'],
        [{ postalCode: '1011', country: 'DE' }, 'address.postalCode'],
      ];
      for (const [address, field] of cases) {
        const res = await estimate(key, address);
        expect(res.statusCode, JSON.stringify(address)).toBe(400);
        expect(JSON.stringify(res.json()), JSON.stringify(address)).toContain(field);
      }
      expect((await estimate(key, { postalCode: 'K1A 0B1', country: 'CA', state: 'ON' })).statusCode).toBe(
        200,
      );
      expect(
        (await p.request({ method: 'POST', url: '/api/cart/shipping-estimates', key, payload: {} }))
          .statusCode,
      ).toBe(400);
    });
  });
});
