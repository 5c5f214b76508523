import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';

/** A refused credential names the headers the platform reads: clients show only the message. */
describe('401s name the accepted key headers', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect: 'sqlite' });
  });
  afterAll(() => p.close());

  const call = (url: string, headers: Record<string, string>) =>
    p.app.inject({ method: 'GET', url, headers });

  it('no key: the message and details list every accepted header', async () => {
    const res = await call('/v1/api-keys', {});
    expect(res.statusCode).toBe(401);
    const body = res.json() as { message: string; details: { acceptedHeaders: string[] } };
    for (const header of ['Authorization: Bearer <key>', 'X-API-Key', 'X-WORKFLOW-API-KEY', 'X-N8N-API-KEY'])
      expect(body.message).toContain(header);
    expect(body.details.acceptedHeaders).toContain('X-API-Key');
  });

  it("another gateway's key header (Azure's api-key, Google's x-goog-api-key) is named as not read", async () => {
    for (const header of ['api-key', 'x-goog-api-key']) {
      const res = await call('/v1/api-keys', { [header]: p.adminKey });
      expect(res.statusCode).toBe(401);
      expect(res.json().message).toContain(`the ${header} header is not read here`);
      // The key itself is never echoed.
      expect(res.body).not.toContain(p.adminKey);
    }
    // The same key in a header the platform reads passes.
    expect((await call('/v1/api-keys', { 'x-api-key': p.adminKey })).statusCode).toBe(200);
  });

  it('a non-Bearer Authorization names Bearer and the other headers, in the dialect body too', async () => {
    const res = await call('/v1/api-keys', {
      authorization: `Basic ${Buffer.from('a:b').toString('base64')}`,
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toMatch(/Bearer <API key or token>.*X-API-Key/);
    // OpenAI's path answers in OpenAI's body, with the same hint in the message its clients show.
    const openai = await call('/v1/models', { 'api-key': p.adminKey });
    expect(openai.statusCode).toBe(401);
    expect((openai.json() as { error: { message: string } }).error.message).toContain(
      'the api-key header is not read here',
    );
  });
});
