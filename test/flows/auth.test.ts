import { afterAll, beforeAll, describe } from 'vitest';
import { authSuite } from '../helpers/auth-suite.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';

/** The shared 401/403/429 suite on the flows routes, in Flowise's error body. */
describe('flows authentication and authorization', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect: 'sqlite' });
  });
  afterAll(() => p?.close());

  const flow = { service: 'flow', errorBody: 'flowise' } as const;
  authSuite(() => p, { ...flow, method: 'GET', url: '/api/v1/chatflows' });
  authSuite(() => p, {
    ...flow,
    method: 'POST',
    url: '/api/v1/chatflows',
    payload: { name: 'x', kind: 'llm', model: 'builtin/extractive' },
  });
  authSuite(() => p, {
    ...flow,
    method: 'PUT',
    url: '/api/v1/chatflows/flow_missing',
    payload: { name: 'y' },
  });
  authSuite(() => p, {
    ...flow,
    method: 'DELETE',
    url: '/api/v1/chatflows/flow_missing',
    weakRole: 'Writer',
  });
  authSuite(() => p, {
    ...flow,
    method: 'POST',
    url: '/api/v1/prediction/flow_missing',
    payload: { question: 'q' },
  });
  authSuite(() => p, { ...flow, method: 'GET', url: '/api/v1/chatmessage/flow_missing' });
  authSuite(() => p, {
    ...flow,
    method: 'DELETE',
    url: '/api/v1/chatmessage/flow_missing',
    weakRole: 'Writer',
  });
  authSuite(() => p, {
    ...flow,
    method: 'POST',
    url: '/api/v1/vector/upsert/flow_missing',
    payload: { documents: [{ pageContent: 'x' }] },
  });
});
