import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { activate, createWorkflow, echoFlow, workflowPlatform } from './support.js';

describe('webhook rate limits', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform('sqlite', { RATE_LIMIT_PER_ENDPOINT: '3', RATE_LIMIT_PER_IP: '1000' });
    await activate(p, await createWorkflow(p, echoFlow('limited')));
  });
  afterAll(() => p.close());

  it("the core's per-endpoint limit applies to webhooks: 429 with the X-RateLimit headers, and no execution", async () => {
    const codes: number[] = [];
    let last: Awaited<ReturnType<typeof p.app.inject>> | undefined;
    for (let i = 0; i < 5; i++) {
      last = await p.app.inject({ method: 'POST', url: '/webhook/limited', payload: { message: 'x' } });
      codes.push(last.statusCode);
    }
    expect(codes).toEqual([200, 200, 200, 429, 429]);
    expect(last?.json()).toMatchObject({ error: true, code: 'RATE_LIMIT_EXCEEDED' });
    expect(last?.headers['x-ratelimit-limit']).toBe('3');
    expect(last?.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(last?.headers['retry-after'])).toBeGreaterThan(0);
    const list = (await p.request({ method: 'GET', url: '/api/v1/executions' })).json() as {
      data: unknown[];
    };
    expect(list.data).toHaveLength(3);
  });
});
