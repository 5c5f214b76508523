import { afterAll, describe, expect, it } from 'vitest';
import { CpuPool } from '../../../../../core/cpu/index.js';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { EngineDeps, Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const pool = new CpuPool({ workers: 1, heapMb: 256, maxQueue: 10 });
afterAll(() => pool.close());

const runHtml = (deps: Partial<EngineDeps>, items: Item[], parameters: Record<string, unknown>) =>
  new WorkflowEngine(testDeps(deps), defaultNodeRegistry).run(
    workflow(
      [
        { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
        { name: 'H', type: 'n8n-nodes-base.html', typeVersion: 1.2, parameters },
      ],
      [['T', 'H']],
    ),
    { nodeName: 'T', items },
    ctx,
  );

const extract = (values: Array<Record<string, unknown>>, options: Record<string, unknown> = {}) => ({
  operation: 'extractHtmlContent',
  sourceData: 'json',
  dataPropertyName: 'html',
  extractionValues: { values },
  options,
});

/** 200 nested divs under a paragraph: `div:has(div:has(div:has(p)))` takes seconds in cheerio. */
const NESTED = `<html><body><p>x</p>${'<div>'.repeat(200)}${'</div>'.repeat(200)}</body></html>`;
const SLOW = 'div:has(div:has(div:has(p)))';

describe('HTML node: extraction in the CPU pool', () => {
  it('gives what the inline extraction gives, per item, as the account whose run it is', async () => {
    const page = `<h1>Title</h1><ul><li><a href="/a">A</a></li><li><a href="/b">B <i>b</i></a></li></ul>
      <input name="q" value="v"><nav>menu</nav><p class="x"> spaced   text </p>`;
    const items = [{ json: { html: page } }, { json: { html: ['<li>one</li>', '<li>two</li>'] } }];
    const parameters = extract(
      [
        { key: 'title', cssSelector: 'h1' },
        { key: 'links', cssSelector: 'a', returnValue: 'attribute', attribute: 'href', returnArray: true },
        { key: 'items', cssSelector: 'li', returnValue: 'html', returnArray: true },
        { key: 'q', cssSelector: 'input', returnValue: 'value' },
        { key: 'body', cssSelector: 'body', skipSelectors: 'nav, ul' },
        { key: 'none', cssSelector: '.missing', returnValue: 'attribute', attribute: 'x' },
      ],
      { trimValues: true, cleanUpText: true },
    );
    const inline = await runHtml({}, items, parameters);
    expect(inline.status).toBe('success');
    const pooled = await runHtml({ cpu: { pool, timeoutMs: 30_000 }, tenant: 'acct_a' }, items, parameters);
    expect(pooled.status).toBe('success');
    expect(jsonOf(pooled.state, 'H')).toEqual(jsonOf(inline.state, 'H'));
    expect(jsonOf(pooled.state, 'H')).toHaveLength(3);
    expect(jsonOf(pooled.state, 'H')[0]).toMatchObject({ title: 'Title', links: ['/a', '/b'], q: 'v' });
  });

  it('names an invalid selector as inline', async () => {
    const out = await runHtml({ cpu: { pool, timeoutMs: 30_000 } }, [{ json: { html: '<p>x</p>' } }], {
      ...extract([{ key: 'p', cssSelector: 'p[' }]),
    });
    expect(out.state.error?.message).toBe("Invalid CSS selector 'p['");
  });

  it("fails the node at the pool's deadline (the selector ran in a worker); the pool serves on", async () => {
    const out = await runHtml({ cpu: { pool, timeoutMs: 500 } }, [{ json: { html: NESTED } }], {
      ...extract([{ key: 'x', cssSelector: SLOW }]),
    });
    expect(out.status).toBe('error');
    expect(out.state.error?.message).toBe(
      `Extracting HTML content stopped: it took longer than 500 ms (CSS selectors '${SLOW}')`,
    );
    expect(out.state.error?.description).toMatch(/nested :has\(\)/);
    const next = await runHtml({ cpu: { pool, timeoutMs: 30_000 } }, [{ json: { html: '<p> y </p>' } }], {
      ...extract([{ key: 'p', cssSelector: 'p' }]),
    });
    expect(jsonOf(next.state, 'H')).toEqual([{ p: 'y' }]);
    expect(pool.started).toBeGreaterThanOrEqual(2);
  }, 30_000);
});
