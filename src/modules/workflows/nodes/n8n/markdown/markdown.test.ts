import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

const runMarkdown = (items: Item[], parameters: Record<string, unknown>) =>
  engine.run(
    workflow(
      [
        { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
        { name: 'M', type: 'n8n-nodes-base.markdown', typeVersion: 1, parameters },
      ],
      [['T', 'M']],
    ),
    { nodeName: 'T', items },
    ctx,
  );

describe('n8n-nodes-base.markdown', () => {
  it('converts both ways at a nested destination key, keeping the item', async () => {
    const toMd = await runMarkdown([{ json: { id: 1 } }], {
      html: '<ul><li>a</li></ul><strong>b</strong>',
      destinationKey: 'out.md',
      options: { bulletMarker: '-' },
    });
    expect(jsonOf(toMd.state, 'M')).toEqual([{ id: 1, out: { md: '- a\n**b**' } }]);
    const toHtml = await runMarkdown([{ json: {} }], {
      mode: 'markdownToHtml',
      markdown: '~~x~~ | a |\n|---|',
      options: { strikethrough: true, noHeaderId: true },
    });
    expect(String(jsonOf(toHtml.state, 'M')[0]?.data)).toContain('<del>x</del>');
  });

  it('refuses HTML over its bound before converting it', async () => {
    const started = Date.now();
    const out = await runMarkdown([{ json: {} }], { html: `<p>${'x'.repeat(300 * 1024)}</p>` });
    expect(out.state.error?.message).toBe('The HTML is too large (300 KB; at most 256 KB here)');
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
