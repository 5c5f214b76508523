import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { CANDLE, cartPlatform, setStock } from './support.js';

const line = (price = '32.00', quantity = 1) =>
  `{"product_id":"${CANDLE.productId}","variant_id":"${CANDLE.variantId}","quantity":${quantity},"price":"${price}"}`;

describe.each(await testDialects())('order intake hardening on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await cartPlatform(dialect);
    await setStock(p, CANDLE.variantId, 1_000_000_000);
  });
  afterAll(() => p.close());

  /** The body as raw JSON text: numbers reach the server's parser exactly as written. */
  const raw = (body: string) =>
    p.request({
      method: 'POST',
      url: '/v1/orders',
      payload: body,
      headers: { 'content-type': 'application/json' },
    });

  it('a numeric order id beyond 2^53 is a 400; as strings, two ids differing above 2^53 are two orders', async () => {
    // 2^53 + 1 parses as 2^53: taken as a number it would collide with the order 2^53.
    for (const field of ['"id":9007199254740993', '"id":1e300', '"id":9007199254740992']) {
      const res = await raw(`{${field},"customer":{},"line_items":[${line()}]}`);
      expect(res.statusCode, field).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    }
    const first = await raw(`{"id":"9007199254740992","customer":{},"line_items":[${line()}]}`);
    const second = await raw(`{"id":"9007199254740993","customer":{},"line_items":[${line()}]}`);
    expect([first.statusCode, second.statusCode]).toEqual([201, 201]);
    expect(first.json().id).not.toBe(second.json().id);
    expect(second.json().storefrontOrderId).toBe('9007199254740993');
    // A safe integer id still works and is the string of itself.
    const safe = await raw(`{"id":9007199254740991,"customer":{"id":42},"line_items":[${line()}]}`);
    expect(safe.statusCode).toBe(201);
    expect(safe.json()).toMatchObject({ storefrontOrderId: '9007199254740991', customer: { id: 42 } });
  });

  it('product, variant and customer ids are held to the same rule', async () => {
    for (const body of [
      `{"id":"c-1","customer":{"id":18014398509481984},"line_items":[${line()}]}`,
      `{"id":"c-2","customer":{},"line_items":[{"product_id":9007199254740993,"variant_id":"v","quantity":1,"price":"1"}]}`,
      `{"id":"c-3","customer":{},"line_items":[{"product_id":"p","variant_id":1e20,"quantity":1,"price":"1"}]}`,
    ]) {
      const res = await raw(body);
      expect(res.statusCode, body).toBe(400);
    }
  });

  it('the stored customer holds only its known fields, never a number turned into null', async () => {
    const res = await p.request({
      method: 'POST',
      url: '/v1/orders',
      payload: {
        id: 'cust-fields',
        customer: { id: 'shop_7', email: 'ann@example.com', note: 'x'.repeat(5000), score: 1e308 },
        line_items: [
          { product_id: CANDLE.productId, variant_id: CANDLE.variantId, quantity: 1, price: '32.00' },
        ],
      },
    });
    expect(res.statusCode).toBe(201);
    const order = (await p.request({ method: 'GET', url: `/v1/orders/${res.json().id}` })).json();
    expect(order.customer).toEqual({ id: 'shop_7', email: 'ann@example.com' });
  });

  it('an order total past 2^31 minor units is stored (201, not 500); past 2^53 it is a 400', async () => {
    const big = await raw(`{"id":"big-1","customer":{},"line_items":[${line('999999999.99', 3)}]}`);
    expect(big.statusCode, big.body).toBe(201);
    expect(big.json().total).toBe(2999999999.97);
    const read = await p.request({ method: 'GET', url: `/v1/orders/${big.json().id}` });
    expect(read.json().total).toBe(2999999999.97);
    const lines = Array.from({ length: 250 }, () => line('999999999.99', 999)).join(',');
    const huge = await raw(`{"id":"big-2","customer":{},"line_items":[${lines}]}`);
    expect(huge.statusCode).toBe(400);
    expect(huge.json()).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'line_items' }] },
    });
  });
});
