import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { cartPlatform, customer, setStock } from './support.js';

describe.each(await testDialects())('checkout contention on %s', (dialect) => {
  let p: TestPlatform;
  let base = '';
  beforeAll(async () => {
    p = await cartPlatform(dialect);
    await p.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(p.app.server.address() as AddressInfo).port}`;
  });
  afterAll(() => p.close());

  it('N buyers checking out the last K units at once: exactly K succeed, stock never negative', async () => {
    const buyers = 12;
    const units = 5;
    const variant = { productId: 'prod_candle_triple_wick', variantId: 'var_candle_22oz' };
    await setStock(p, variant.variantId, 100);
    const keys = await Promise.all(Array.from({ length: buyers }, (_, i) => customer(p, `buyer_${i}`)));
    for (const key of keys) {
      const res = await fetch(`${base}/api/cart/items`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...variant, quantity: 1 }),
      });
      expect(res.status).toBe(200);
    }
    await setStock(p, variant.variantId, units);
    const answers = await Promise.all(
      keys.map((key) =>
        fetch(`${base}/api/cart/checkout`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}` },
        }).then((r) => r.status),
      ),
    );
    expect(answers.filter((s) => s === 200)).toHaveLength(units);
    expect(answers.filter((s) => s === 409)).toHaveLength(buyers - units);
    const level = (await p.request({ method: 'GET', url: `/v1/inventory/${variant.variantId}` })).json() as {
      onHand: number;
      reserved: number;
      available: number;
    };
    expect(level).toEqual({ variantId: variant.variantId, onHand: units, reserved: units, available: 0 });
  });

  it('carts holding the same variants in opposite orders check out at once without deadlocks (no 500s)', async () => {
    const a = { productId: 'prod_candle_classic', variantId: 'var_candle_4oz' };
    const b = { productId: 'prod_candle_classic', variantId: 'var_candle_14oz' };
    await setStock(p, a.variantId, 10_000);
    await setStock(p, b.variantId, 10_000);
    const keys = await Promise.all(Array.from({ length: 30 }, (_, i) => customer(p, `crosser_${i}`)));
    for (const [i, key] of keys.entries()) {
      for (const line of i % 2 === 0 ? [a, b] : [b, a]) {
        const res = await fetch(`${base}/api/cart/items`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ ...line, quantity: 1 }),
        });
        expect(res.status).toBe(200);
      }
    }
    for (let round = 0; round < 3; round++) {
      const statuses = await Promise.all(
        keys.map((key) =>
          fetch(`${base}/api/cart/checkout`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}` },
          }).then((r) => r.status),
        ),
      );
      expect(statuses.every((s) => s === 200)).toBe(true);
    }
    const level = (await p.request({ method: 'GET', url: `/v1/inventory/${a.variantId}` })).json() as {
      reserved: number;
    };
    expect(level.reserved).toBe(30);
  });
});
