import type { LightMyRequestResponse } from 'fastify';
import type { Dialect } from '../../src/core/db/types.js';
import { authModule } from '../../src/modules/auth/index.js';
import { commerceModule } from '../../src/modules/commerce/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';

export const ALL_SCOPES = ['commerce:read', 'commerce:write', 'commerce:delete'];

export function commercePlatform(dialect: Dialect, env?: Record<string, string>): Promise<TestPlatform> {
  return createTestPlatform({
    dialect,
    modules: [authModule, healthModule, commerceModule],
    ...(env ? { env } : {}),
  });
}

/** A customer token minted with the owner's admin key. */
export async function customerToken(
  p: TestPlatform,
  customerId: string,
  scopes = ALL_SCOPES,
): Promise<string> {
  const res = await p.request({ method: 'POST', url: '/v1/auth/tokens', payload: { customerId, scopes } });
  if (res.statusCode !== 201) throw new Error(`mint failed: ${res.statusCode} ${res.body}`);
  return (res.json() as { token: string }).token;
}

export const validBlend = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: 'Bright and woody',
  isPublic: false,
  composition: {
    notes: [
      { id: 'note_bergamot', ratio: 0.25 },
      { id: 'note_rose', ratio: 0.4 },
      { id: 'note_sandalwood', ratio: 0.35 },
    ],
    baseIntensity: 'medium',
  },
  profile: { occasions: ['evening'] },
  ...extra,
});

export function expectError(
  res: LightMyRequestResponse,
  status: number,
  code: string,
): Record<string, unknown> {
  const body = res.json() as Record<string, unknown>;
  if (res.statusCode !== status || body.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${res.statusCode} ${res.body}`);
  }
  return body;
}
