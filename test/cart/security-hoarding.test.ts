import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { cartPlatform, customer, setStock } from './support.js';

type Cart = { checkoutId: string | null; checkoutExpires: string | null; items: Array<{ id: string }> };
const PILLAR = { productId: 'prod_candle_beeswax_pillar', variantId: 'var_pillar_3x4' };

describe.each(await testDialects())('inventory hoarding on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    // The defaults: 10 units of a variant per customer, 4 renewals (TTL 900 s).
    p = await cartPlatform(dialect);
  });
  afterAll(() => p.close());

  const add = (key: string, quantity: number, customizations?: Record<string, unknown>) =>
    p.request({
      method: 'POST',
      url: '/api/cart/items',
      key,
      payload: { ...PILLAR, quantity, ...(customizations ? { customizations } : {}) },
    });
  const checkout = (key: string) =>
    p.request({ method: 'POST', url: '/api/cart/checkout', key, payload: {} });
  const reserved = async () =>
    (
      (await p.request({ method: 'GET', url: `/v1/inventory/${PILLAR.variantId}` })).json() as {
        reserved: number;
      }
    ).reserved;

  it('one customer holds at most CART_MAX_RESERVED_PER_VARIANT units of a variant (422)', async () => {
    await setStock(p, PILLAR.variantId, 25);
    const key = await customer(p, 'hoarder');
    const over = await add(key, 11);
    expect(over.statusCode).toBe(422);
    expect(over.json()).toMatchObject({
      code: 'UNPROCESSABLE',
      details: { variantId: PILLAR.variantId, requested: 11, limit: 10 },
    });
    expect((await add(key, 6)).statusCode).toBe(200);
    // Split over lines (another customization), or raised by a change: still one variant.
    expect((await add(key, 5, { giftWrapped: true })).statusCode).toBe(422);
    const cart = (await add(key, 4, { giftWrapped: true })).json() as Cart;
    const first = cart.items[0]?.id as string;
    const patched = await p.request({
      method: 'PATCH',
      url: `/api/cart/items/${first}`,
      key,
      payload: { quantity: 7 },
    });
    expect(patched.statusCode).toBe(422);
    expect((await checkout(key)).statusCode).toBe(200);
    expect(await reserved()).toBe(10);
    // The other 15 stay on sale.
    const other = await customer(p, 'shopper');
    expect((await add(other, 10)).statusCode).toBe(200);
    expect((await checkout(other)).statusCode).toBe(200);
  });

  it('a reservation is renewed at most CHECKOUT_MAX_RENEWALS times back to back (409), letting it lapse does not reset that', async () => {
    await setStock(p, 'var_pillar_3x6', 25);
    // Tokens are short-lived and the clock moves on: a fresh token of the same customer each time.
    const renewer = () => customer(p, 'renewer');
    const key = await renewer();
    await p.request({
      method: 'POST',
      url: '/api/cart/items',
      key,
      payload: { productId: PILLAR.productId, variantId: 'var_pillar_3x6', quantity: 10 },
    });
    for (let hold = 0; hold < 5; hold++) {
      expect((await checkout(await renewer())).statusCode, `hold ${hold}`).toBe(200);
      p.clock.advance(14 * 60);
    }
    const refused = await checkout(await renewer());
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ code: 'CONFLICT', details: { maxRenewals: 4 } });
    const retryAt = (refused.json() as { details: { retryAt: string } }).details.retryAt;
    // The hold lapses; taking it again at once continues the same run.
    p.clock.advance(2 * 60);
    const again = await renewer();
    const cart = (await p.request({ method: 'GET', url: '/api/cart', key: again })).json() as Cart;
    expect(cart.checkoutId).toBeNull();
    expect((await checkout(again)).statusCode).toBe(409);
    // One TTL after the last hold ended the stock has been on sale: a new run starts.
    p.clock.set(retryAt);
    expect((await checkout(await renewer())).statusCode).toBe(200);
  });

  it('checkouts of one cart fired at once leave one reservation, not one each', async () => {
    await setStock(p, 'var_pillar_3x4', 100);
    const key = await customer(p, 'burst');
    expect((await add(key, 10)).statusCode).toBe(200);
    const before = await reserved();
    const answers = await Promise.all(Array.from({ length: 4 }, () => checkout(key)));
    expect(answers.every((a) => a.statusCode === 200 || a.statusCode === 409)).toBe(true);
    expect((await reserved()) - before).toBe(10);
  });
});
