import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { FakeProvider } from './support/fake-provider.js';
import { otherAccountKey, workflowPlatform } from './support.js';

/**
 * The chat models' credential types in `/api/v1/credentials`: created with n8n's fields, and n8n's
 * `test` action where n8n has one (list the provider's models with the key) against a local provider.
 */
describe.each(await testDialects())('AI model credentials on %s', (dialect) => {
  let p: TestPlatform;
  const provider = new FakeProvider();

  beforeAll(async () => {
    await provider.start();
    p = await workflowPlatform(dialect);
  });
  afterAll(async () => {
    await p.close();
    await provider.stop();
  });
  beforeEach(() => provider.reset());

  let n = 0;
  const create = async (type: string, data: Record<string, unknown>, key?: string) => {
    const res = await p.request({
      method: 'POST',
      url: '/api/v1/credentials',
      payload: { name: `${type} account ${++n}`, type, data },
      ...(key ? { key } : {}),
    });
    return res;
  };
  const test = (id: string, key?: string) =>
    p.request({ method: 'POST', url: `/api/v1/credentials/${id}/test`, ...(key ? { key } : {}) });

  it.each([
    [
      'groqApi',
      (b: string) => ({ apiKey: 'gq', url: `${b}/openai/v1` }),
      '/openai/v1/models',
      'authorization',
      'Bearer gq',
    ],
    [
      'mistralCloudApi',
      (b: string) => ({ apiKey: 'mi', url: `${b}/v1` }),
      '/v1/models',
      'authorization',
      'Bearer mi',
    ],
    [
      'openRouterApi',
      (b: string) => ({ apiKey: 'or', url: `${b}/api/v1` }),
      '/api/v1/models',
      'authorization',
      'Bearer or',
    ],
    ['googlePalmApi', (b: string) => ({ apiKey: 'gm', host: b }), '/v1beta/models', 'x-goog-api-key', 'gm'],
    // n8n's Qdrant credential test lists the collections.
    ['qdrantApi', (b: string) => ({ qdrantUrl: b, apiKey: 'qd' }), '/collections', 'api-key', 'qd'],
  ])(
    '%s: created, and tested by listing the models with the key',
    async (type, data, path, header, value) => {
      const created = await create(type, data(provider.base));
      expect(created.statusCode).toBe(201);
      const id = (created.json() as { id: string }).id;
      provider.queue({ body: { object: 'list', data: [{ id: 'm', object: 'model' }] } });
      const ok = await test(id);
      expect(ok.json()).toEqual({ status: 'OK', message: 'Connection tested successfully' });
      expect(provider.requests[0]?.method).toBe('GET');
      expect(provider.requests[0]?.url).toBe(path);
      expect(provider.requests[0]?.headers[header]).toBe(value);
      provider.queue({ status: 401, body: { error: { message: 'Invalid API Key' } } });
      const refused = await test(id);
      expect(refused.json()).toMatchObject({ status: 'Error' });
      expect((refused.json() as { message: string }).message).toContain('Invalid API Key');
    },
  );

  it("pineconeApi takes n8n's key (and the pod-based API's environment); qdrantApi needs its URL", async () => {
    expect((await create('pineconeApi', { apiKey: 'pc', environment: 'us-east-1' })).statusCode).toBe(201);
    const noKey = await create('pineconeApi', { environment: 'us-east-1' });
    expect(noKey.statusCode).toBe(400);
    expect(noKey.body).toContain('data.apiKey');
    const noUrl = await create('qdrantApi', { apiKey: 'qd' });
    expect(noUrl.statusCode).toBe(400);
    expect(noUrl.body).toContain('data.qdrantUrl');
    expect((await create('qdrantApi', { apiUrl: 'http://localhost:6333' })).statusCode).toBe(201);
  });

  it("azureOpenAiApi takes n8n's fields; it has no test (as in n8n); unknown fields are refused", async () => {
    const created = await create('azureOpenAiApi', {
      apiKey: 'k',
      resourceName: 'contoso',
      apiVersion: '2025-03-01-preview',
      endpoint: 'https://westeurope.api.cognitive.microsoft.com',
    });
    expect(created.statusCode).toBe(201);
    const tested = await test((created.json() as { id: string }).id);
    expect(tested.json()).toMatchObject({ status: 'Error', message: expect.stringContaining('no test') });
    const bad = await create('groqApi', { apiKey: 'k', organization: 'x' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('organization');
    const missing = await create('googlePalmApi', { host: provider.base });
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toContain('apiKey');
  });

  it("a test toward a private address is refused by the outbound guard; another account's id is a 404", async () => {
    const created = await create('openRouterApi', { apiKey: 'k', url: 'http://169.254.169.254/api/v1' });
    expect(created.statusCode).toBe(201);
    const id = (created.json() as { id: string }).id;
    const guarded = await test(id);
    expect(guarded.json()).toMatchObject({ status: 'Error' });
    expect(provider.requests).toHaveLength(0);
    const other = await otherAccountKey(p);
    expect((await test(id, other)).statusCode).toBe(404);
  });
});
