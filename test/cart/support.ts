import type { Dialect } from '../../src/core/db/types.js';
import { authModule } from '../../src/modules/auth/index.js';
import { cartModule } from '../../src/modules/cart/index.js';
import { commerceModule } from '../../src/modules/commerce/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';

export const CANDLE = { productId: 'prod_candle_classic', variantId: 'var_candle_8oz', price: 32 };
export const TIN = { productId: 'prod_candle_classic', variantId: 'var_candle_4oz', price: 18 };

export function cartPlatform(dialect: Dialect, env: Record<string, string> = {}): Promise<TestPlatform> {
  return createTestPlatform({
    dialect,
    modules: [authModule, healthModule, commerceModule, cartModule],
    env,
  });
}

/** A customer token for `customerId`, minted with the owner's key. */
export async function customer(p: TestPlatform, customerId: string): Promise<string> {
  const res = await p.request({
    method: 'POST',
    url: '/v1/auth/tokens',
    payload: { customerId, scopes: ['commerce:read', 'commerce:write'] },
  });
  if (res.statusCode !== 201) throw new Error(`token: ${res.statusCode} ${res.body}`);
  return (res.json() as { token: string }).token;
}

export async function setStock(p: TestPlatform, variantId: string, onHand: number): Promise<void> {
  const res = await p.request({ method: 'PUT', url: `/v1/inventory/${variantId}`, payload: { onHand } });
  if (res.statusCode !== 200) throw new Error(`stock: ${res.statusCode} ${res.body}`);
}
