import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { createWorkflow, n8nNode, workflowPlatform } from './support.js';

/**
 * A Code node whose items do not fit in the sandbox fails saying so: QuickJS throws null when it
 * cannot allocate even the error, and the failure used to read just "null" (found by the wave-8 audit).
 */
describe('Code node out of sandbox memory', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform('sqlite');
  });
  afterAll(() => p?.close());

  it.each([150_000, 250_000])('%i empty items: a memory error, not "null"', async (count) => {
    const id = await createWorkflow(p, {
      name: 'many items',
      nodes: [
        n8nNode('Start', 'manualTrigger', 1, {}),
        n8nNode('Code', 'code', 2, {
          jsCode: `return Array.from({ length: ${count} }, () => ({ json: {} }));`,
        }),
      ],
      connections: { Start: { main: [[{ node: 'Code', type: 'main', index: 0 }]] } },
    });
    const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/run`, payload: {} });
    expect(res.statusCode).toBe(200);
    const run = res.json() as {
      status: string;
      data: { resultData: { error: { message: string; node: string } } };
    };
    expect(run.status).toBe('error');
    expect(run.data.resultData.error.node).toBe('Code');
    expect(run.data.resultData.error.message).toMatch(/memory/);
  });
});
