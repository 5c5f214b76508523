import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { createWorkflow, n8nNode, workflowPlatform } from './support.js';

const dialects = await testDialects();

/**
 * n8n's `GET /executions?includeData=true` on runs with large data: the page is weighed before any
 * data is read, ends early past 16 M characters of run data (at least one execution), and its cursor
 * leads to the rest. Found by the wave-8 audit: 8 runs of ~11 MB made one 87 MB answer, the event
 * loop held for seconds.
 */
describe.each(dialects)('executions list with includeData on %s', (dialect) => {
  let p: TestPlatform;
  let big: string;
  let small: string;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    const run = (code: string) => ({
      name: 'data',
      nodes: [n8nNode('Start', 'manualTrigger', 1, {}), n8nNode('Code', 'code', 2, { jsCode: code })],
      connections: { Start: { main: [[{ node: 'Code', type: 'main', index: 0 }]] } },
    });
    // ~7 M characters of run data each (numbers do not count against the Code node's text bound).
    big = await createWorkflow(
      p,
      run('return [{ json: { a: Array.from({ length: 1000000 }, (_, i) => i) } }];'),
    );
    small = await createWorkflow(p, run('return [{ json: { small: true } }];'));
    for (const id of [big, big, big, small, small])
      expect(
        (await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/run`, payload: {} })).statusCode,
      ).toBe(200);
  }, 120_000);
  afterAll(() => p?.close());

  const list = async (query: string) => {
    const res = await p.request({ method: 'GET', url: `/api/v1/executions?${query}` });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    return res.json() as { data: Array<{ id: string; data?: unknown }>; nextCursor: string | null };
  };

  it('ends a page of large runs early, with a cursor to the rest; the pages hold every execution once', async () => {
    const all = await list(`workflowId=${big}&limit=250`);
    expect(all.data).toHaveLength(3);
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const page = await list(
        `workflowId=${big}&includeData=true&limit=250${cursor ? `&cursor=${cursor}` : ''}`,
      );
      sizes.push(page.data.length);
      for (const e of page.data) {
        seen.push(e.id);
        expect(JSON.stringify(e.data)).toContain('999999');
      }
      cursor = page.nextCursor;
    } while (cursor);
    // 7 M + 7 M fit in 16 M characters, a third does not.
    expect(sizes).toEqual([2, 1]);
    expect(seen).toEqual(all.data.map((e) => e.id));
  });

  it('sends a page of small runs whole, and a page of one large run even past the budget', async () => {
    const smallPage = await list(`workflowId=${small}&includeData=true&limit=250`);
    expect(smallPage.data).toHaveLength(2);
    expect(smallPage.nextCursor).toBeNull();
    expect(JSON.stringify(smallPage.data[0]?.data)).toContain('"small":true');
    const one = await list(`workflowId=${big}&includeData=true&limit=1`);
    expect(one.data).toHaveLength(1);
    expect(one.nextCursor).not.toBeNull();
    const projected = await list(`workflowId=${small}&includeData=true&fields=id,status`);
    expect(Object.keys(projected.data[0] ?? {}).sort()).toEqual(['id', 'status']);
  });
});
