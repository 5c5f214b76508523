import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowDefinition } from '../../../src/modules/workflows/engine/types.js';
import { defaultNodeRegistry } from '../../../src/modules/workflows/nodes/index.js';
import { type FakeServer, startFakeOrders } from '../support/fakes/index.js';
import {
  dedupeKeyOf,
  loadWorkflow,
  namedDeps,
  problemPaths,
  runWebhook,
  TOKENS,
  WorkflowEngine,
} from './harness.js';

describe('store-order-processing', () => {
  let def: WorkflowDefinition;
  let orders: FakeServer;
  let engine: WorkflowEngine;
  const order = {
    id: 'shop-1001',
    email: 'ann@example.com',
    customer: { id: 'cust-7', email: 'ann@example.com', first_name: 'Ann' },
    line_items: [
      { id: 'li-1', product_id: 'prod_candle', variant_id: 'var_8oz', quantity: 2, price: '24.00' },
      { id: 'li-2', product_id: 'prod_wick', variant_id: null, quantity: 1, price: '3.50' },
    ],
    total_price: '51.50',
    currency: 'EUR',
  };

  beforeAll(async () => {
    def = await loadWorkflow('store-order-processing');
    orders = await startFakeOrders({ token: TOKENS.platform });
    engine = new WorkflowEngine(namedDeps({ ORDERS_URL: orders.url }), defaultNodeRegistry);
  });
  afterAll(() => orders.close());

  it('is a valid definition: HMAC-signed webhook, deduped by the order id', async () => {
    expect(engine.validate(def)).toEqual([]);
    expect(def).toMatchObject({ id: 'wf_store_order_processing', name: 'store-order-processing' });
    const hook = engine.triggerNodes(def)[0];
    expect(hook?.parameters).toMatchObject({
      path: 'store-order-processing',
      httpMethod: 'POST',
      authentication: 'hmac',
      credential: 'store-order-processing-hmac',
      responseMode: 'responseNode',
      options: { hmacHeader: 'X-Store-Hmac-SHA256' },
    });
    const key = dedupeKeyOf(def);
    expect(await engine.evaluateExpression(def, key, { body: order })).toBe('shop-1001');
    expect(await engine.evaluateExpression(def, key, { body: { id: 42 } })).toBe('42');
    expect(await engine.evaluateExpression(def, key, { body: {} })).toBeUndefined();
  });

  it('passes the storefront payload to the order intake and answers with both ids', async () => {
    const outcome = await runWebhook(engine, def, order, { 'x-store-topic': 'orders/create' });
    expect(outcome.status, JSON.stringify(outcome.state.error)).toBe('success');
    expect(outcome.webhookResponse).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: { received: true, orderId: 'shop-1001', platformOrderId: 'ord_0001', status: 'received' },
    });
    const call = orders.received.at(-1);
    expect(call).toMatchObject({ method: 'POST', path: '/v1/orders', body: order });
    expect(call?.headers.authorization).toBe('Bearer PROD_API_for_the_platform');
    expect(call?.headers['idempotency-key']).toBe('store-order-shop-1001');
    expect(call?.headers['content-type']).toBe('application/json');
  });

  it('an invalid order ends in error listing every bad field, and creates nothing', async () => {
    const before = orders.received.length;
    const outcome = await runWebhook(engine, def, { id: 1001, line_items: [] });
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.node).toBe('Validate');
    expect(problemPaths(outcome)).toEqual(['body.customer', 'body.id', 'body.line_items']);
    expect(outcome.webhookResponse).toBeNull();
    expect(orders.received.length).toBe(before);
  });

  it('a failing order intake ends in error naming the node (no answer set)', async () => {
    orders.failNext('/v1/orders', 500);
    const outcome = await runWebhook(engine, def, order);
    expect(outcome.status).toBe('error');
    expect(outcome.state.error).toMatchObject({
      node: 'Create order',
      message: 'Request failed with status 500',
    });
    expect(outcome.webhookResponse).toBeNull();
  });
});
