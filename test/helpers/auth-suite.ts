import { expect, it } from 'vitest';
import type { ServiceId } from '../../src/config.js';
import type { TestPlatform } from './platform.js';

export interface ProtectedRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  service: ServiceId;
  payload?: unknown;
  /** Routes of a compatible surface answer in that product's error body (the platform's fields beside). */
  errorBody?: 'platform' | 'ollama' | 'openai' | 'flowise';
  /** The role that is one step too weak (default: Reader for writes, a Custom key of another scope for reads). */
  weakRole?: 'Reader' | 'Writer';
}

const ERROR_FIELD = {
  platform: true,
  ollama: expect.any(String),
  openai: { message: expect.any(String), type: expect.any(String) },
  flowise: true,
};

function expectError(
  res: { statusCode: number; json(): unknown },
  status: number,
  code: string,
  shape: keyof typeof ERROR_FIELD = 'platform',
): void {
  expect(res.statusCode, JSON.stringify(res.json())).toBe(status);
  const body = res.json() as Record<string, unknown>;
  expect(body).toMatchObject({ error: ERROR_FIELD[shape], code });
  // Flowise's InternalFlowiseError fields, which its clients read.
  if (shape === 'flowise') expect(body).toMatchObject({ statusCode: status, success: false });
  expect(typeof body.requestId).toBe('string');
}

/**
 * The shared auth suite (401, 403, 429) for one route. Call inside a `describe` whose
 * `beforeAll` sets up the platform; `get` returns it.
 */
export function authSuite(get: () => TestPlatform, route: ProtectedRoute): void {
  const name = `${route.method} ${route.url}`;
  const send = (key: string | null, headers: Record<string, string> = {}) =>
    get().request({
      method: route.method,
      url: route.url,
      key,
      headers,
      ...(route.payload !== undefined ? { payload: route.payload as object } : {}),
    });

  it(`${name}: 401 without a key`, async () => {
    expectError(await send(null), 401, 'UNAUTHORIZED', route.errorBody);
  });

  it(`${name}: 401 with a malformed key or a bad checksum`, async () => {
    expectError(await send('not-a-key'), 401, 'UNAUTHORIZED', route.errorBody);
    const good = get().adminKey;
    const flipped = `${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`;
    expectError(await send(flipped), 401, 'UNAUTHORIZED', route.errorBody);
  });

  it(`${name}: 401 with a revoked key`, async () => {
    const p = get();
    const { key, id } = await p.createKey({
      name: 'to revoke',
      type: 'development',
      services: ['*'],
      role: 'Admin',
    });
    const revoked = await p.request({ method: 'DELETE', url: `/v1/api-keys/${id}` });
    expect(revoked.statusCode).toBe(204);
    expectError(await send(key), 401, 'UNAUTHORIZED', route.errorBody);
  });

  it(`${name}: 401 with an expired key`, async () => {
    const p = get();
    const soon = new Date(p.clock.now().getTime() + 60_000).toISOString();
    const { key } = await p.createKey({
      name: 'short-lived',
      type: 'development',
      services: ['*'],
      role: 'Admin',
      expiresAt: soon,
    });
    p.clock.advance(120);
    expectError(await send(key), 401, 'UNAUTHORIZED', route.errorBody);
  });

  it(`${name}: 403 with a key for another service`, async () => {
    const other = route.service === 'game' ? 'llm' : 'game';
    const { key } = await get().createKey({
      name: 'other',
      type: 'development',
      services: [other],
      role: 'Admin',
    });
    expectError(await send(key), 403, 'FORBIDDEN', route.errorBody);
  });

  it(`${name}: 403 with a key whose scopes lack the operation`, async () => {
    const isRead = route.method === 'GET';
    const body = isRead
      ? {
          name: 'no read',
          type: 'development',
          services: [route.service],
          role: 'Custom',
          scopes: [`${route.service}:write`],
        }
      : { name: 'weak', type: 'development', services: [route.service], role: route.weakRole ?? 'Reader' };
    const { key } = await get().createKey(body);
    expectError(await send(key), 403, 'FORBIDDEN', route.errorBody);
  });

  it(`${name}: 429 with Retry-After once the daily quota is spent`, async () => {
    const { key } = await get().createKey({
      name: 'tiny quota',
      type: 'development',
      services: ['*'],
      role: 'Admin',
      dailyQuota: 1,
    });
    const first = await send(key);
    expect(first.statusCode).not.toBe(429);
    expect(first.headers['x-ratelimit-limit']).toBe('1');
    expect(first.headers['x-ratelimit-remaining']).toBe('0');
    const second = await send(key);
    expectError(second, 429, 'RATE_LIMIT_EXCEEDED', route.errorBody);
    expect(Number(second.headers['retry-after'])).toBeGreaterThan(0);
  });
}
