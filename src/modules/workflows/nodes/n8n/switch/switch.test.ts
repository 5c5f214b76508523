import { describe, expect, it } from 'vitest';
import { ctx, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';
import { switchOutputCount } from './index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);
const start = { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 };

async function runSwitch(parameters: Record<string, unknown>, items: Item[], typeVersion = 3) {
  const node = { name: 'Switch', type: 'n8n-nodes-base.switch', typeVersion, parameters };
  const def = workflow([start, node], [['Start', 'Switch']]);
  expect(engine.validate(def)).toEqual([]);
  const out = await engine.run(def, { nodeName: 'Start', items }, ctx);
  const outputs = (out.state.runData.Switch?.[0]?.output ?? []).map((o) => o.map((i) => i.json.k));
  return { out, outputs };
}

const rule = (equals: string, outputKey?: string) => ({
  conditions: {
    options: { caseSensitive: true, leftValue: '', typeValidation: 'strict' },
    conditions: [
      { leftValue: '={{ $json.k }}', rightValue: equals, operator: { type: 'string', operation: 'equals' } },
    ],
    combinator: 'and',
  },
  ...(outputKey ? { renameOutput: true, outputKey } : {}),
});

const keys = (...ks: string[]) => ks.map((k) => ({ json: { k } }));

describe('n8n-nodes-base.switch v3', () => {
  it('routes each item to the first matching rule; unmatched items are dropped by default', async () => {
    const { outputs } = await runSwitch(
      { rules: { values: [rule('a', 'A'), rule('b')] } },
      keys('b', 'a', 'z'),
    );
    expect(outputs).toEqual([['a'], ['b']]);
  });

  it('sends unmatched items to an extra output or to a rule output', async () => {
    const extra = await runSwitch(
      {
        rules: { values: [rule('a'), rule('b')] },
        options: { fallbackOutput: 'extra', renameFallbackOutput: 'Other' },
      },
      keys('a', 'z'),
    );
    expect(extra.outputs).toEqual([['a'], [], ['z']]);
    const toFirst = await runSwitch(
      { rules: { values: [rule('a'), rule('b')] }, options: { fallbackOutput: 0 } },
      keys('z'),
    );
    expect(toFirst.outputs).toEqual([['z'], []]);
  });

  it('sends an item to every matching output when asked', async () => {
    const { outputs } = await runSwitch(
      { rules: { values: [rule('a'), rule('a'), rule('b')] }, options: { allMatchingOutputs: true } },
      keys('a'),
    );
    expect(outputs).toEqual([['a'], ['a'], []]);
  });

  it('uses n8n default rule when rules are omitted (everything matches rule 0)', async () => {
    const { outputs } = await runSwitch({}, keys('x', 'y'));
    expect(outputs).toEqual([['x', 'y']]);
  });

  it('routes by an expression in expression mode, refusing an index out of range in n8n words', async () => {
    const items = [{ json: { k: 'a', to: 2 } }, { json: { k: 'b', to: 0 } }];
    const ok = await runSwitch({ mode: 'expression', numberOutputs: 3, output: '={{ $json.to }}' }, items);
    expect(ok.outputs).toEqual([['b'], [], ['a']]);
    const bad = await runSwitch({ mode: 'expression', numberOutputs: 2, output: '={{ $json.to }}' }, items);
    expect(bad.out.status).toBe('error');
    expect(bad.out.state.error).toMatchObject({
      message: 'The ouput 2 is not allowed. ',
      description: 'Output indexes are zero based, if you want to use the extra output use 1',
    });
  });

  it('has looseTypeValidation at the top level from 3.1 and as an option in 3', async () => {
    const numberRule = {
      conditions: {
        options: { caseSensitive: true, leftValue: '', typeValidation: 'loose' },
        conditions: [
          { leftValue: '={{ $json.k }}', rightValue: 5, operator: { type: 'number', operation: 'gt' } },
        ],
        combinator: 'and',
      },
    };
    const v31 = await runSwitch(
      { rules: { values: [numberRule] }, looseTypeValidation: true },
      keys('7', '3'),
      3.1,
    );
    expect(v31.outputs).toEqual([['7']]);
    const v3 = await runSwitch(
      { rules: { values: [numberRule] }, options: { looseTypeValidation: true } },
      keys('7'),
      3,
    );
    expect(v3.outputs).toEqual([['7']]);
    const def = workflow(
      [
        start,
        {
          name: 'S',
          type: 'n8n-nodes-base.switch',
          typeVersion: 3,
          parameters: { looseTypeValidation: true },
        },
      ],
      [],
    );
    expect(engine.validate(def).map((p) => p.path)).toContain('nodes[1].parameters.looseTypeValidation');
  });

  it('counts its outputs from the static parameters', () => {
    expect(switchOutputCount({ mode: 'expression', numberOutputs: 3 })).toBe(3);
    expect(switchOutputCount({ rules: { values: [{}, {}] }, options: { fallbackOutput: 'extra' } })).toBe(3);
    expect(switchOutputCount({})).toBe(1);
  });
});
