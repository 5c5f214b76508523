import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authModule } from '../../src/modules/auth/index.js';
import { cartModule } from '../../src/modules/cart/index.js';
import { commerceModule } from '../../src/modules/commerce/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { workflowsModule } from '../../src/modules/workflows/index.js';
import { freePort } from '../helpers/listening.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects, uniqueName } from '../helpers/services.js';
import { activate, createCredential } from '../workflows/support.js';
import { setStock } from './support.js';

describe.each(await testDialects())('store-order-processing into the order intake on %s', (dialect) => {
  let p: TestPlatform;
  const secret = 'store-signing-secret';
  const order = {
    id: 'shop-5001',
    customer: { id: 'c-1', email: 'ann@example.com' },
    line_items: [
      { product_id: 'prod_candle_classic', variant_id: 'var_candle_8oz', quantity: 3, price: '32.00' },
    ],
  };
  const raw = JSON.stringify(order);
  const sign = (body: string, key = secret) => createHmac('sha256', key).update(body).digest('base64');
  const deliver = (body: string, signature?: string) =>
    p.app.inject({
      method: 'POST',
      url: '/webhook/store-order-processing',
      payload: body,
      headers: {
        'content-type': 'application/json',
        ...(signature ? { 'x-store-hmac-sha256': signature } : {}),
      },
    });
  const orders = async () =>
    (
      (await p.request({ method: 'GET', url: '/v1/orders?storefrontOrderId=shop-5001' })).json() as {
        data: unknown[];
      }
    ).data;

  beforeAll(async () => {
    const port = await freePort();
    p = await createTestPlatform({
      dialect,
      modules: [authModule, healthModule, commerceModule, cartModule, workflowsModule],
      env: {
        ORDERS_URL: `http://127.0.0.1:${port}`,
        WORKFLOWS_DIR: 'workflows',
        QUEUE_PREFIX: uniqueName('q'),
      },
    });
    await p.app.listen({ port, host: '127.0.0.1' });
    await p.ctx.apis.workflows?.importShipped(p.accountId);
    const intakeKey = await p.createKey({
      name: 'intake',
      type: 'production',
      role: 'Writer',
      services: ['commerce'],
    });
    await createCredential(p, 'store-order-processing-hmac', 'hmacSecret', { secret });
    await createCredential(p, 'platform-api-key', 'httpBearerAuth', { token: intakeKey.key });
    await activate(p, 'wf_store_order_processing');
    await setStock(p, 'var_candle_8oz', 20);
  });
  afterAll(() => p.close());

  it('a bad or missing signature → 401/403 and no order', async () => {
    expect((await deliver(raw)).statusCode).toBe(401);
    expect((await deliver(raw, sign(raw, 'wrong'))).statusCode).toBe(403);
    expect(await orders()).toEqual([]);
  });

  it('a signed delivery creates the order through the intake and takes the stock; the same delivery twice → one order', async () => {
    const res = await deliver(raw, sign(raw));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ received: true, orderId: 'shop-5001' });
    expect(await orders()).toHaveLength(1);
    const level = (await p.request({ method: 'GET', url: '/v1/inventory/var_candle_8oz' })).json();
    expect(level).toMatchObject({ onHand: 17 });
    const again = await deliver(raw, sign(raw));
    expect(again.statusCode).toBe(200);
    expect(await orders()).toHaveLength(1);
    expect((await p.request({ method: 'GET', url: '/v1/inventory/var_candle_8oz' })).json()).toMatchObject({
      onHand: 17,
    });
  });
});
