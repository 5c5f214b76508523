import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);
const start = { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 };

async function runSet(parameters: Record<string, unknown>, items: Item[], typeVersion = 1) {
  const def = workflow(
    [start, { name: 'Set', type: 'n8n-nodes-base.set', typeVersion, parameters }],
    [['Start', 'Set']],
  );
  expect(engine.validate(def)).toEqual([]);
  return engine.run(def, { nodeName: 'Start', items }, ctx);
}

const input: Item[] = [{ json: { list: ['foo'], n: '123' } }];

describe('n8n-nodes-base.set v1/v2', () => {
  it('writes booleans, numbers, then strings at dot and index paths', async () => {
    const out = await runSet(
      {
        values: {
          string: [{ name: 'list[1]', value: 'bar' }],
          boolean: [{ name: 'flag', value: 1 }],
          number: [{ name: 'a.b', value: 2 }],
        },
      },
      input,
    );
    expect(jsonOf(out.state, 'Set')).toEqual([{ list: ['foo', 'bar'], n: '123', flag: true, a: { b: 2 } }]);
  });

  it('keeps only the set fields with keepOnlySet; v2 turns numeric strings into numbers, v1 does not', async () => {
    const params = { keepOnlySet: true, values: { number: [{ name: 'x', value: '={{ $json.n }}' }] } };
    expect(jsonOf((await runSet(params, input, 1)).state, 'Set')).toEqual([{ x: '123' }]);
    expect(jsonOf((await runSet(params, input, 2)).state, 'Set')).toEqual([{ x: 123 }]);
  });

  it("fills n8n's defaults for an entry's omitted name and value", async () => {
    const out = await runSet({ keepOnlySet: true, values: { number: [{}], string: [{ name: 's' }] } }, input);
    expect(jsonOf(out.state, 'Set')).toEqual([{ propertyName: 0, s: '' }]);
  });

  it('refuses parameters Set v1 does not have', () => {
    const def = workflow(
      [start, { name: 'Set', type: 'n8n-nodes-base.set', typeVersion: 2, parameters: { mode: 'raw' } }],
      [],
    );
    expect(engine.validate(def).map((p) => p.path)).toContain('nodes[1].parameters.mode');
  });
});
