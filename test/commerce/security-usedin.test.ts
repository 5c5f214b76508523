import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANDLE, cartPlatform, customer, setStock } from '../cart/support.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { validBlend } from './support.js';

type BlendView = { usedIn: Array<{ orderId: string }>; usageCount: number };

describe.each(await testDialects())('usedIn of a public blend on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await cartPlatform(dialect);
    await setStock(p, CANDLE.variantId, 100);
  });
  afterAll(() => p.close());

  const order = (id: string, blendId: string, extra: Record<string, unknown>) =>
    p.request({
      method: 'POST',
      url: '/v1/orders',
      payload: {
        id,
        line_items: [
          {
            product_id: CANDLE.productId,
            variant_id: CANDLE.variantId,
            quantity: 1,
            price: '32.00',
            properties: [{ name: 'fragranceId', value: blendId }],
          },
        ],
        ...extra,
      },
    });

  it("lists only the reader's own orders; everyone else sees how many there were", async () => {
    const alice = await customer(p, 'alice');
    const bob = await customer(p, 'bob');
    const carol = await customer(p, 'carol');
    const created = await p.request({
      method: 'POST',
      url: '/api/custom-blends',
      key: alice,
      payload: validBlend('Shared', { isPublic: true }),
    });
    const blendId = created.json().id as string;

    // Bob orders Alice's public blend through his own prepared cart.
    const added = await p.request({
      method: 'POST',
      url: '/api/cart/items',
      key: bob,
      payload: {
        productId: CANDLE.productId,
        variantId: CANDLE.variantId,
        quantity: 1,
        customizations: { fragranceId: blendId },
      },
    });
    expect(added.statusCode, added.body).toBe(200);
    const checkout = await p.request({ method: 'POST', url: '/api/cart/checkout', key: bob, payload: {} });
    const bobs = await order('u-bob', blendId, {
      customer: { id: 'storefront_bob' },
      checkout_id: checkout.json().checkoutId,
    });
    expect(bobs.statusCode).toBe(201);
    // Alice orders it too, straight from the storefront, as herself.
    const alices = await order('u-alice', blendId, { customer: { id: 'alice' } });
    expect(alices.statusCode).toBe(201);
    // An order of nobody known.
    expect((await order('u-anon', blendId, { customer: {} })).statusCode).toBe(201);

    const read = async (key: string) =>
      (await p.request({ method: 'GET', url: `/api/custom-blends/${blendId}`, key })).json() as BlendView;
    const asAlice = await read(alice);
    expect(asAlice.usedIn.map((u) => u.orderId)).toEqual([alices.json().id]);
    expect(asAlice.usageCount).toBe(3);
    const listed = (await p.request({ method: 'GET', url: '/api/custom-blends', key: alice })).json()
      .blends as Array<BlendView & { id: string }>;
    expect(listed.find((b) => b.id === blendId)?.usedIn.map((u) => u.orderId)).toEqual([alices.json().id]);
    const asBob = await read(bob);
    expect(asBob.usedIn.map((u) => u.orderId)).toEqual([bobs.json().id]);
    expect(asBob.usageCount).toBe(3);
    for (const other of [carol, p.adminKey]) {
      const view = await read(other);
      expect(view.usedIn).toEqual([]);
      expect(view.usageCount).toBe(3);
    }
    const text = JSON.stringify(await read(carol));
    expect(text).not.toContain(bobs.json().id);
    expect(text).not.toContain(alices.json().id);
  });
});
