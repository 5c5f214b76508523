import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);
const items = [1, 2, 3, 4].map((n) => ({ json: { n } }));

/** Limit, NoOp, Stop and Error, Sticky Note: the small n8n nodes of this group. */
describe('n8n-nodes-base.limit, noOp, stopAndError, stickyNote', () => {
  const chain = (type: string, parameters: Record<string, unknown>) =>
    workflow(
      [
        { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
        { name: 'N', type, typeVersion: 1, parameters },
      ],
      [['T', 'N']],
    );

  it('limits to the first or last items', async () => {
    const first = await engine.run(
      chain('n8n-nodes-base.limit', { maxItems: 2 }),
      { nodeName: 'T', items },
      ctx,
    );
    expect(jsonOf(first.state, 'N')).toEqual([{ n: 1 }, { n: 2 }]);
    const last = await engine.run(
      chain('n8n-nodes-base.limit', { maxItems: 3, keep: 'lastItems' }),
      { nodeName: 'T', items },
      ctx,
    );
    expect(jsonOf(last.state, 'N')).toEqual([{ n: 2 }, { n: 3 }, { n: 4 }]);
    expect(engine.validate(chain('n8n-nodes-base.limit', { maxItems: 0 }))[0]?.path).toBe(
      'nodes[1].parameters.maxItems',
    );
  });

  it('passes items through a NoOp and refuses parameters on it', async () => {
    const out = await engine.run(chain('n8n-nodes-base.noOp', {}), { nodeName: 'T', items }, ctx);
    expect(jsonOf(out.state, 'N')).toEqual(items.map((i) => i.json));
    expect(engine.validate(chain('n8n-nodes-base.noOp', { x: 1 }))[0]?.path).toBe('nodes[1].parameters.x');
  });

  it('stops with a message or an error object', async () => {
    const msg = await engine.run(
      chain('n8n-nodes-base.stopAndError', { errorMessage: 'bad order' }),
      { nodeName: 'T', items },
      ctx,
    );
    expect(msg.status).toBe('error');
    expect(msg.state.error).toMatchObject({ message: 'bad order', node: 'N' });
    const obj = await engine.run(
      chain('n8n-nodes-base.stopAndError', {
        errorType: 'errorObject',
        errorObject: '{"message": "nope", "description": "why"}',
      }),
      { nodeName: 'T', items },
      ctx,
    );
    expect(obj.state.error).toMatchObject({ message: 'nope', description: 'why' });
    expect(engine.validate(chain('n8n-nodes-base.stopAndError', {}))).toEqual([
      { path: 'nodes[1].parameters.errorMessage', message: 'is required' },
    ]);
  });

  it('keeps a sticky note: valid with no connections, refused as a connection target, never run', async () => {
    const def = workflow(
      [
        { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
        { name: 'N', type: 'n8n-nodes-base.noOp', typeVersion: 1 },
        {
          name: 'Note',
          type: 'n8n-nodes-base.stickyNote',
          typeVersion: 1,
          parameters: { content: '## Read me', height: 200, width: 300, color: 4 },
        },
      ],
      [['T', 'N']],
    );
    expect(engine.validate(def)).toEqual([]);
    const out = await engine.run(def, { nodeName: 'T', items }, ctx);
    expect(out.status).toBe('success');
    expect(out.state.runData.Note).toBeUndefined();
    const wired = workflow(def.nodes, [['T', 'Note']]);
    expect(engine.validate(wired)[0]?.message).toBe("node 'Note' takes no input");
  });
});
