import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authSuite } from '../helpers/auth-suite.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { otherAccountKey, workflowPlatform } from './support.js';

describe.each(await testDialects())('credentials on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
  });
  afterAll(() => p.close());

  const create = (payload: unknown, key?: string) =>
    p.request({
      method: 'POST',
      url: '/api/v1/credentials',
      payload: payload as object,
      ...(key ? { key } : {}),
    });

  it('stores a credential encrypted and never shows the secret', async () => {
    const res = await create({ name: 'signing', type: 'hmacSecret', data: { secret: 'top-secret-value' } });
    expect(res.statusCode).toBe(201);
    const cred = res.json() as Record<string, unknown>;
    expect(Object.keys(cred).sort()).toEqual(['createdAt', 'id', 'name', 'owner', 'type', 'updatedAt']);
    expect(res.body).not.toContain('top-secret-value');
    const got = await p.request({ method: 'GET', url: `/api/v1/credentials/${cred.id}` });
    expect(got.body).not.toContain('top-secret-value');
    const list = await p.request({ method: 'GET', url: '/api/v1/credentials' });
    expect(list.body).not.toContain('top-secret-value');
    expect((list.json() as { data: unknown[] }).data.length).toBeGreaterThanOrEqual(1);
    const row = await p.ctx.db
      .selectFrom('credentials')
      .select('data')
      .where('id', '=', cred.id as string)
      .executeTakeFirstOrThrow();
    expect(row.data).not.toContain('top-secret-value');
    expect(row.data.startsWith('v1.')).toBe(true);
  });

  it('checks the data against the type', async () => {
    const missing = await create({ name: 'h1', type: 'httpHeaderAuth', data: { name: 'X-Key' } });
    expect(missing.statusCode).toBe(400);
    expect(JSON.stringify(missing.json())).toMatch(/data\.value/);
    const extra = await create({ name: 'h2', type: 'httpBearerAuth', data: { token: 't', other: 'x' } });
    expect(extra.statusCode).toBe(400);
    const unknownType = await create({ name: 'h3', type: 'ftp', data: {} });
    expect(unknownType.statusCode).toBe(400);
    const wrongTypes = await create({ name: 7, type: 'hmacSecret', data: { secret: 5 } });
    expect(wrongTypes.statusCode).toBe(400);
  });

  it('names are unique per account (409), not across accounts', async () => {
    expect((await create({ name: 'dup', type: 'httpBearerAuth', data: { token: 'a' } })).statusCode).toBe(
      201,
    );
    const again = await create({ name: 'dup', type: 'httpBearerAuth', data: { token: 'b' } });
    expect(again.statusCode).toBe(409);
    const other = await otherAccountKey(p);
    expect(
      (await create({ name: 'dup', type: 'httpBearerAuth', data: { token: 'c' } }, other)).statusCode,
    ).toBe(201);
  });

  it('delete; unknown or another account’s → 404 CREDENTIAL_NOT_FOUND', async () => {
    const id = (
      (await create({ name: 'gone', type: 'httpBearerAuth', data: { token: 'a' } })).json() as { id: string }
    ).id;
    const other = await otherAccountKey(p);
    expect(
      (await p.request({ method: 'GET', url: `/api/v1/credentials/${id}`, key: other })).statusCode,
    ).toBe(404);
    expect(
      (await p.request({ method: 'DELETE', url: `/api/v1/credentials/${id}`, key: other })).statusCode,
    ).toBe(404);
    expect((await p.request({ method: 'DELETE', url: `/api/v1/credentials/${id}` })).statusCode).toBe(200);
    const res = await p.request({ method: 'GET', url: `/api/v1/credentials/${id}` });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 'CREDENTIAL_NOT_FOUND' });
  });

  describe('auth', () => {
    authSuite(() => p, {
      method: 'POST',
      url: '/api/v1/credentials',
      service: 'workflow',
      payload: { name: 'auth-suite', type: 'httpBearerAuth', data: { token: 't' } },
    });
  });
});
