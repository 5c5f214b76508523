import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otherAccountKey } from '../helpers/accounts.js';
import { authSuite } from '../helpers/auth-suite.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { cartPlatform, customer, setStock } from './support.js';

const order = (id: string | number, extra: Record<string, unknown> = {}) => ({
  id,
  email: 'ann@example.com',
  customer: { id: 7, email: 'ann@example.com' },
  line_items: [
    { product_id: 'prod_candle_classic', variant_id: 'var_candle_8oz', quantity: 2, price: '32.00' },
  ],
  ...extra,
});

describe.each(await testDialects())('order intake on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await cartPlatform(dialect);
  });
  afterAll(() => p.close());

  const intake = (payload: unknown, key?: string) =>
    p.request({ method: 'POST', url: '/v1/orders', payload: payload as object, ...(key ? { key } : {}) });
  const level = async (variantId: string) =>
    (await p.request({ method: 'GET', url: `/v1/inventory/${variantId}` })).json() as {
      onHand: number;
      reserved: number;
    };

  it('creates an order and takes the stock; the same storefront id again → the same order, nothing taken', async () => {
    await setStock(p, 'var_candle_8oz', 10);
    const res = await intake(order(1001));
    expect(res.statusCode).toBe(201);
    const created = res.json() as {
      id: string;
      storefrontOrderId: string;
      total: number;
      lineItems: unknown[];
    };
    expect(created).toMatchObject({ storefrontOrderId: '1001', total: 64, currency: 'USD' });
    expect(created.id).toMatch(/^ord_/);
    expect(await level('var_candle_8oz')).toMatchObject({ onHand: 8, reserved: 0 });
    const again = await intake(order(1001));
    expect(again.statusCode).toBe(200);
    expect((again.json() as { id: string }).id).toBe(created.id);
    expect(await level('var_candle_8oz')).toMatchObject({ onHand: 8 });
    const got = await p.request({ method: 'GET', url: `/v1/orders/${created.id}` });
    expect(got.json()).toEqual(created);
    const list = (await p.request({ method: 'GET', url: '/v1/orders' })).json() as {
      data: Array<{ id: string }>;
    };
    expect(list.data.map((o) => o.id)).toContain(created.id);
  });

  it('concurrent deliveries of one order create one', async () => {
    await setStock(p, 'var_candle_8oz', 10);
    const answers = await Promise.all(Array.from({ length: 6 }, () => intake(order('race-1'))));
    const ids = new Set(answers.map((a) => (a.json() as { id: string }).id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(1);
    expect(await level('var_candle_8oz')).toMatchObject({ onHand: 8 });
  });

  it('consumes the reservation of a prepared checkout it names', async () => {
    await setStock(p, 'var_candle_14oz', 6);
    const key = await customer(p, 'cust_ord');
    await p.request({
      method: 'POST',
      url: '/api/cart/items',
      key,
      payload: { productId: 'prod_candle_classic', variantId: 'var_candle_14oz', quantity: 2 },
    });
    const cart = (await p.request({ method: 'POST', url: '/api/cart/checkout', key })).json() as {
      checkoutId: string;
    };
    expect(await level('var_candle_14oz')).toMatchObject({ onHand: 6, reserved: 2 });
    const res = await intake(
      order('with-checkout', {
        line_items: [
          { product_id: 'prod_candle_classic', variant_id: 'var_candle_14oz', quantity: 2, price: '48.00' },
        ],
        note_attributes: [{ name: 'checkoutId', value: cart.checkoutId }],
      }),
    );
    expect(res.statusCode).toBe(201);
    expect(await level('var_candle_14oz')).toMatchObject({ onHand: 4, reserved: 0 });
    const after = (await p.request({ method: 'GET', url: '/api/cart', key })).json() as {
      readyForCheckout: boolean;
    };
    expect(after.readyForCheckout).toBe(false);
  });

  it('records blend usage so the blend lists the order in usedIn', async () => {
    const key = await customer(p, 'cust_blend');
    const blend = await p.request({
      method: 'POST',
      url: '/api/custom-blends',
      key,
      payload: {
        name: 'Ordered blend',
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
    const blendId = (blend.json() as { id: string }).id;
    await setStock(p, 'var_candle_8oz', 10);
    const res = await intake(
      order('blend-1', {
        // The storefront's customer id is the customer of the token: the order is theirs.
        customer: { id: 'cust_blend' },
        line_items: [
          {
            product_id: 'prod_candle_classic',
            variant_id: 'var_candle_8oz',
            quantity: 1,
            price: '32.00',
            properties: [{ name: 'fragranceId', value: blendId }],
          },
        ],
      }),
    );
    const created = res.json() as { id: string };
    const detail = (await p.request({ method: 'GET', url: `/api/custom-blends/${blendId}`, key })).json() as {
      usedIn: Array<{ productId: string; orderId: string; productName: string }>;
    };
    expect(detail.usedIn).toEqual([
      expect.objectContaining({
        productId: 'prod_candle_classic',
        orderId: created.id,
        productName: 'Classic Soy Candle',
      }),
    ]);
    expect(detail).toMatchObject({ usageCount: 1 });
  });

  it('out of stock → 409 and no order; unknown product → 404; bad payloads → 400', async () => {
    await setStock(p, 'var_candle_4oz', 1);
    const short = await intake(
      order('short-1', {
        line_items: [
          { product_id: 'prod_candle_classic', variant_id: 'var_candle_4oz', quantity: 3, price: '18.00' },
        ],
      }),
    );
    expect(short.statusCode).toBe(409);
    expect(short.json()).toMatchObject({ code: 'OUT_OF_STOCK' });
    const list = (await p.request({ method: 'GET', url: '/v1/orders?storefrontOrderId=short-1' })).json() as {
      data: unknown[];
    };
    expect(list.data).toEqual([]);
    expect(await level('var_candle_4oz')).toMatchObject({ onHand: 1 });
    const unknown = await intake(
      order('u-1', {
        line_items: [{ product_id: 'prod_x', variant_id: 'var_x', quantity: 1, price: '1.00' }],
      }),
    );
    expect(unknown.statusCode).toBe(404);
    for (const bad of [
      {},
      order('b-1', { line_items: [] }),
      order('b-2', { line_items: [{ product_id: 'p', variant_id: 'v', quantity: 0, price: '1' }] }),
      order('b-3', { line_items: [{ product_id: 'p', variant_id: 'v', quantity: 1, price: 'free' }] }),
      { ...order('b-4'), customer: 'ann' },
    ]) {
      const res = await intake(bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
    }
  });

  it('Reader keys cannot take orders; unknown order → 404 ORDER_NOT_FOUND', async () => {
    const reader = await p.createKey({
      name: 'r',
      type: 'production',
      role: 'Reader',
      services: ['commerce'],
    });
    expect((await intake(order('r-1'), reader.key)).statusCode).toBe(403);
    const res = await p.request({ method: 'GET', url: '/v1/orders/ord_nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 'ORDER_NOT_FOUND' });
  });

  it('orders are the storefront’s: a customer token can neither list, read nor place them', async () => {
    const created = (await intake(order('mine-1'))).json() as { id: string };
    const shopper = await customer(p, 'cust_nosy');
    for (const [method, url] of [
      ['GET', '/v1/orders'],
      ['GET', `/v1/orders/${created.id}`],
      ['POST', '/v1/orders'],
    ] as const) {
      const res = await p.request({
        method,
        url,
        key: shopper,
        ...(method === 'POST' ? { payload: order('by-shopper') } : {}),
      });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json()).toMatchObject({ code: 'FORBIDDEN' });
    }
  });

  it("another account's checkout id neither releases its hold nor empties its cart", async () => {
    await setStock(p, 'var_candle_14oz', 10);
    const shopper = await customer(p, 'cust_held');
    await p.request({
      method: 'POST',
      url: '/api/cart/items',
      key: shopper,
      payload: { productId: 'prod_candle_classic', variantId: 'var_candle_14oz', quantity: 2 },
    });
    const { checkoutId } = (
      await p.request({ method: 'POST', url: '/api/cart/checkout', key: shopper })
    ).json() as {
      checkoutId: string;
    };
    expect(await level('var_candle_14oz')).toMatchObject({ onHand: 10, reserved: 2 });
    const other = await otherAccountKey(p);
    const res = await intake(
      order('foreign-checkout', {
        checkout_id: checkoutId,
        line_items: [
          { product_id: 'prod_candle_classic', variant_id: 'var_candle_14oz', quantity: 2, price: '48.00' },
        ],
      }),
      other,
    );
    // The order takes free stock; the first account's hold and cart stay as they were.
    expect(res.statusCode).toBe(201);
    expect(await level('var_candle_14oz')).toMatchObject({ onHand: 8, reserved: 2 });
    const cart = (await p.request({ method: 'GET', url: '/api/cart', key: shopper })).json() as {
      checkoutId: string | null;
      itemCount: number;
    };
    expect(cart).toMatchObject({ checkoutId, itemCount: 2 });
  });

  it('a numeric price is held to the string form: two decimals, nine digits; a blend id is a string', async () => {
    const line = (price: unknown, properties?: unknown) => ({
      line_items: [
        {
          product_id: 'prod_candle_classic',
          variant_id: 'var_candle_8oz',
          quantity: 1,
          price,
          ...(properties ? { properties } : {}),
        },
      ],
    });
    await setStock(p, 'var_candle_8oz', 10);
    for (const [i, price] of [1e308, 1e20, 0.285, 1.005, 1234567890].entries()) {
      const res = await intake(order(`price-${i}`, line(price)));
      expect(res.statusCode, String(price)).toBe(400);
      expect(JSON.stringify(res.json().details)).toContain('line_items[0].price');
    }
    const ok = await intake(order('price-ok', line(0.29)));
    expect(ok.statusCode).toBe(201);
    expect(ok.json()).toMatchObject({ total: 0.29 });
    const blend = await intake(order('blend-obj', line('1.00', [{ name: 'blendId', value: { a: 1 } }])));
    expect(blend.statusCode).toBe(400);
    expect(JSON.stringify(blend.json().details)).toContain('line_items[0].properties');
  });

  describe('auth', () => {
    authSuite(() => p, { method: 'POST', url: '/v1/orders', service: 'commerce', payload: order('auth-1') });
  });
});
