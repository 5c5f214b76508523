import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

const runXml = (items: Item[], parameters: Record<string, unknown>) =>
  engine.run(
    workflow(
      [
        { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
        { name: 'X', type: 'n8n-nodes-base.xml', typeVersion: 1, parameters },
      ],
      [['T', 'X']],
    ),
    { nodeName: 'T', items },
    ctx,
  );

const billionLaughs = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<lolz>&lol9;</lolz>`;

describe('n8n-nodes-base.xml', () => {
  it('reads attributes merged into the element and builds XML with options', async () => {
    const parsed = await runXml([{ json: { data: '<a id="1"><b>x</b><b>y</b></a>' } }], {
      mode: 'xmlToJson',
    });
    expect(jsonOf(parsed.state, 'X')).toEqual([{ a: { id: '1', b: ['x', 'y'] } }]);
    const built = await runXml([{ json: { n: 1 } }], {
      mode: 'jsonToxml',
      options: { headless: true, rootName: 'r' },
    });
    expect(jsonOf(built.state, 'X')).toEqual([{ data: '<r>\n  <n>1</n>\n</r>' }]);
  });

  it('never expands entities a DTD declares: a billion-laughs document is a node error, at once', async () => {
    const started = Date.now();
    const out = await runXml([{ json: { data: billionLaughs } }], { mode: 'xmlToJson' });
    expect(out.status).toBe('error');
    expect(out.state.error?.message).toBe('The XML could not be parsed');
    expect(out.state.error?.description).toMatch(/entity/i);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('refuses a document over the size bound and a missing property by name', async () => {
    const big = await runXml([{ json: { data: `<a>${'x'.repeat(11 * 1024 * 1024)}</a>` } }], {
      mode: 'xmlToJson',
    });
    expect(big.state.error?.message).toBe('The XML document is too large (11 MB; at most 10 MB here)');
    const missing = await runXml([{ json: {} }], { mode: 'xmlToJson', dataPropertyName: 'xml' });
    expect(missing.state.error?.message).toBe('Item has no JSON property called "xml"');
  });
});
