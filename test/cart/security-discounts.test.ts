import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { CANDLE, cartPlatform, customer, setStock } from './support.js';

type Cart = { checkoutId: string | null; discounts: Array<{ code: string }> };

describe.each(await testDialects())('discount codes under concurrency on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await cartPlatform(dialect);
    await setStock(p, CANDLE.variantId, 1000);
  });
  afterAll(() => p.close());

  const createCode = async (payload: Record<string, unknown>) => {
    const res = await p.request({ method: 'POST', url: '/v1/discounts', payload });
    expect(res.statusCode, res.body).toBe(201);
  };
  const cartOf = async (id: string) => {
    const key = await customer(p, id);
    const res = await p.request({
      method: 'POST',
      url: '/api/cart/items',
      key,
      payload: { productId: CANDLE.productId, variantId: CANDLE.variantId, quantity: 1 },
    });
    expect(res.statusCode).toBe(200);
    return key;
  };
  const apply = (key: string, code: string) =>
    p.request({ method: 'POST', url: '/api/cart/discounts', key, payload: { code } });

  it('two non-stackable 50 % codes applied at the same moment: exactly one sticks (5 races)', async () => {
    await createCode({ code: 'HALF_A', type: 'percentage', value: 50 });
    await createCode({ code: 'HALF_B', type: 'percentage', value: 50 });
    for (let race = 0; race < 5; race++) {
      const key = await cartOf(`racer_${race}`);
      const answers = await Promise.all([apply(key, 'HALF_A'), apply(key, 'HALF_B')]);
      expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 422]);
      expect(answers.find((a) => a.statusCode === 422)?.json()).toMatchObject({
        code: 'INVALID_DISCOUNT_CODE',
        details: { reason: 'not_combinable' },
      });
      const cart = (await p.request({ method: 'GET', url: '/api/cart', key })).json() as Cart;
      expect(cart.discounts, `race ${race}`).toHaveLength(1);
    }
  });

  it('six non-stackable codes at once: one sticks', async () => {
    const codes = Array.from({ length: 6 }, (_, i) => `SIX_${i}`);
    for (const code of codes) await createCode({ code, type: 'percentage', value: 50 });
    for (let race = 0; race < 3; race++) {
      const key = await cartOf(`six_${race}`);
      const answers = await Promise.all(codes.map((code) => apply(key, code)));
      expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(1);
      expect(answers.filter((a) => a.statusCode === 422)).toHaveLength(5);
      const cart = (await p.request({ method: 'GET', url: '/api/cart', key })).json() as Cart;
      expect(cart.discounts).toHaveLength(1);
    }
  });

  it('a single-use code redeemed by two orders at the same moment: one order, one use', async () => {
    await createCode({ code: 'ONLY_ONCE', type: 'percentage', value: 10, usageLimit: 1 });
    const buyers = await Promise.all(['once_a', 'once_b', 'once_c'].map(cartOf));
    for (const key of buyers) expect((await apply(key, 'ONLY_ONCE')).statusCode).toBe(200);
    const checkouts: string[] = [];
    for (const key of buyers.slice(0, 2)) {
      const res = await p.request({ method: 'POST', url: '/api/cart/checkout', key, payload: {} });
      expect(res.statusCode).toBe(200);
      checkouts.push((res.json() as Cart).checkoutId as string);
    }
    const orders = await Promise.all(
      checkouts.map((checkoutId, i) =>
        p.request({
          method: 'POST',
          url: '/v1/orders',
          payload: {
            id: `once-order-${i}`,
            customer: { id: `once_${i}` },
            checkout_id: checkoutId,
            line_items: [
              { product_id: CANDLE.productId, variant_id: CANDLE.variantId, quantity: 1, price: '28.80' },
            ],
          },
        }),
      ),
    );
    expect(orders.map((o) => o.statusCode).sort()).toEqual([201, 422]);
    expect(orders.find((o) => o.statusCode === 422)?.json()).toMatchObject({
      code: 'INVALID_DISCOUNT_CODE',
      details: { code: 'ONLY_ONCE', reason: 'exhausted' },
    });
    const list = (await p.request({ method: 'GET', url: '/v1/discounts?limit=250' })).json() as {
      data: Array<{ code: string; usedCount: number }>;
    };
    expect(list.data.find((d) => d.code === 'ONLY_ONCE')?.usedCount).toBe(1);
    // The refused order recorded nothing: its stock and cart are as they were.
    const refused = orders.findIndex((o) => o.statusCode === 422);
    const lost = (
      await p.request({ method: 'GET', url: `/v1/orders?storefrontOrderId=once-order-${refused}` })
    ).json() as {
      data: unknown[];
    };
    expect(lost.data).toEqual([]);
    // A cart still holding the used-up code is told so before its customer pays.
    const late = await p.request({
      method: 'POST',
      url: '/api/cart/checkout',
      key: buyers[2] as string,
      payload: {},
    });
    expect(late.statusCode).toBe(422);
    expect(late.json()).toMatchObject({ details: { code: 'ONLY_ONCE', reason: 'exhausted' } });
  });

  it('a usage limit beyond what the column holds is a 400, not a 500', async () => {
    const res = await p.request({
      method: 'POST',
      url: '/v1/discounts',
      payload: { code: 'HUGE', type: 'percentage', value: 5, usageLimit: 3_000_000_000 },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});
