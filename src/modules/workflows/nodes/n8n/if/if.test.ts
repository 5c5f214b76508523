import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);
const start = { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 };

async function runIf(
  parameters: Record<string, unknown>,
  items: Item[],
  typeVersion = 2,
  continueOnFail = false,
) {
  const node = { name: 'If', type: 'n8n-nodes-base.if', typeVersion, parameters, continueOnFail };
  const def = workflow([start, node], [['Start', 'If']]);
  expect(engine.validate(def)).toEqual([]);
  return engine.run(def, { nodeName: 'Start', items }, ctx);
}

const conditions = (typeValidation: 'strict' | 'loose' = 'strict') => ({
  options: { caseSensitive: true, leftValue: '', typeValidation },
  conditions: [
    {
      id: 'a',
      leftValue: '={{ $json.total }}',
      rightValue: 100,
      operator: { type: 'number', operation: 'gte' },
    },
  ],
  combinator: 'and',
});

const items = (...totals: unknown[]) => totals.map((total) => ({ json: { total } })) as Item[];

describe('n8n-nodes-base.if v2', () => {
  it('sends items whose conditions hold to output 0 and the rest to output 1', async () => {
    const out = await runIf({ conditions: conditions(), options: {} }, items(150, 20, 100));
    expect(out.status).toBe('success');
    expect(jsonOf(out.state, 'If', 0)).toEqual([{ total: 150 }, { total: 100 }]);
    expect(jsonOf(out.state, 'If', 1)).toEqual([{ total: 20 }]);
  });

  it('fails on a value of the wrong type in strict mode, and converts in loose mode', async () => {
    const strict = await runIf({ conditions: conditions('strict') }, items('150'), 2.2);
    expect(strict.status).toBe('error');
    expect(strict.state.error?.message).toBe(
      "Wrong type: '150' is a string but was expecting a number [condition 0, item 0]",
    );
    const loose = await runIf(
      { conditions: conditions('loose'), looseTypeValidation: true },
      items('150'),
      2.2,
    );
    expect(jsonOf(loose.state, 'If', 0)).toEqual([{ total: '150' }]);
  });

  it("honours options.caseSensitive, IF v2's first name for ignoreCase, when the conditions name no rule", async () => {
    const text = {
      conditions: [
        {
          id: 'a',
          leftValue: '={{ $json.total }}',
          rightValue: 'ABC',
          operator: { type: 'string', operation: 'equals' },
        },
      ],
      combinator: 'and',
    };
    const run = (caseSensitive: boolean) =>
      runIf({ conditions: text, options: { caseSensitive } }, items('abc'));
    expect(jsonOf((await run(false)).state, 'If', 0)).toEqual([{ total: 'abc' }]);
    expect(jsonOf((await run(true)).state, 'If', 1)).toEqual([{ total: 'abc' }]);
  });

  it('with continueOnFail sends an item it cannot evaluate to the false output', async () => {
    const out = await runIf({ conditions: conditions() }, items('x', 200), 2, true);
    expect(out.status).toBe('success');
    expect(jsonOf(out.state, 'If', 0)).toEqual([{ total: 200 }]);
    expect(jsonOf(out.state, 'If', 1)).toEqual([{ total: 'x' }]);
  });

  it('knows where each version keeps "less strict type validation"', () => {
    const problems = (version: number, params: Record<string, unknown>) => {
      const def = workflow(
        [start, { name: 'If', type: 'n8n-nodes-base.if', typeVersion: version, parameters: params }],
        [],
      );
      return engine.validate(def).map((p) => p.path);
    };
    expect(problems(2, { conditions: conditions(), options: { looseTypeValidation: true } })).toEqual([]);
    expect(problems(2, { conditions: conditions(), looseTypeValidation: true })).toContain(
      'nodes[1].parameters.looseTypeValidation',
    );
    expect(problems(2.1, { conditions: conditions(), looseTypeValidation: true })).toEqual([]);
    expect(problems(2.1, { conditions: conditions(), options: { looseTypeValidation: true } })).toContain(
      'nodes[1].parameters.options.looseTypeValidation',
    );
    expect(problems(2.3, { conditions: conditions() })).toEqual(['nodes[1].type']);
  });

  it('refuses unknown parameters and operations at save time', () => {
    const validate = (c: Record<string, unknown>) =>
      engine.validate(
        workflow(
          [start, { name: 'If', type: 'n8n-nodes-base.if', typeVersion: 2, parameters: { conditions: c } }],
          [],
        ),
      );
    expect(validate({ ...conditions(), extra: true }).map((p) => p.path)).toContain(
      'nodes[1].parameters.conditions.extra',
    );
    const after = [{ leftValue: 1, rightValue: 2, operator: { type: 'number', operation: 'after' } }];
    expect(validate({ ...conditions(), conditions: after })).toEqual([
      {
        path: 'nodes[1].parameters.conditions.conditions[0].operator.operation',
        message: expect.stringContaining("'after' is not an operation of type 'number'"),
      },
    ]);
  });
});
