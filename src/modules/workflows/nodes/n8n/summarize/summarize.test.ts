import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);
const items = [{ json: { id: 2, tag: 'x' } }, { json: { id: 1, tag: 'y' } }, { json: { id: 2, tag: 'x' } }];

async function run(type: string, typeVersion: number, parameters: Record<string, unknown>) {
  const def = workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      { name: 'N', type, typeVersion, parameters },
    ],
    [['T', 'N']],
  );
  const out = await engine.run(def, { nodeName: 'T', items }, ctx);
  return { out: jsonOf(out.state, 'N'), error: out.state.error };
}

describe('n8n-nodes-base.summarize', () => {
  it('v1 fails on a field no item has; v1.1 goes on', async () => {
    const p = { fieldsToSummarize: { values: [{ aggregation: 'sum', field: 'missing' }] } };
    expect((await run('n8n-nodes-base.summarize', 1, p)).error?.message).toBe(
      "The field 'missing' does not exist in any items",
    );
    expect((await run('n8n-nodes-base.summarize', 1.1, p)).out).toEqual([{ sum_missing: 0 }]);
  });

  it('needs at least one field to summarize', async () => {
    expect((await run('n8n-nodes-base.summarize', 1, {})).error?.message).toBe(
      "You need to add at least one aggregation to 'Fields to Summarize' with non empty 'Field'",
    );
  });
});
