import { describe, expect, it } from 'vitest';
import { binaryOf } from '../../../engine/binary.js';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

const runHtml = (items: Item[], parameters: Record<string, unknown>, typeVersion = 1.2) =>
  engine.run(
    workflow(
      [
        { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
        { name: 'H', type: 'n8n-nodes-base.html', typeVersion, parameters },
      ],
      [['T', 'H']],
    ),
    { nodeName: 'T', items },
    ctx,
  );

describe('n8n-nodes-base.html', () => {
  it('fills a template per item and builds one table of all items', async () => {
    const items = [{ json: { name: 'Ada', ok: true } }, { json: { name: 'Bob', ok: false } }];
    const tpl = await runHtml(items, { html: '<p>{{ $json.name }}</p>' });
    expect(jsonOf(tpl.state, 'H')).toEqual([{ html: '<p>Ada</p>' }, { html: '<p>Bob</p>' }]);
    const table = await runHtml(items, { operation: 'convertToHtmlTable', options: { customStyling: true } });
    const html = String(jsonOf(table.state, 'H')[0]?.table);
    expect(html).toContain('<th>name</th><th>ok</th>');
    expect(html).toContain('<input type="checkbox" checked="checked"/>');
    expect(html).toContain('>Bob</td>');
  });

  it('extracts from a binary HTML file, v1 text being cheerio text', async () => {
    const file = binaryOf(Buffer.from('<ul><li> a </li><li>b</li></ul>'), 'text/html', 'x.html');
    const out = await runHtml(
      [{ json: {}, binary: { data: file } }],
      {
        operation: 'extractHtmlContent',
        sourceData: 'binary',
        extractionValues: { values: [{ key: 'li', cssSelector: 'li', returnArray: true }] },
        options: { trimValues: true },
      },
      1,
    );
    expect(jsonOf(out.state, 'H')).toEqual([{ li: ['a', 'b'] }]);
  });

  it('refuses a 10 MB page with a clear error, quickly', async () => {
    const page = `<html><body>${'<p>lorem ipsum</p>'.repeat((10 * 1024 * 1024) / 18)}</body></html>`;
    const started = Date.now();
    const out = await runHtml([{ json: { data: page } }], {
      operation: 'extractHtmlContent',
      extractionValues: { values: [{ key: 'p', cssSelector: 'p' }] },
    });
    expect(out.status).toBe('error');
    expect(out.state.error?.message).toBe('The HTML is too large (10 MB; at most 2 MB here)');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('names a bad CSS selector', async () => {
    const out = await runHtml([{ json: { data: '<p>x</p>' } }], {
      operation: 'extractHtmlContent',
      extractionValues: { values: [{ key: 'p', cssSelector: 'p[' }] },
    });
    expect(out.state.error?.message).toBe("Invalid CSS selector 'p['");
  });
});
