import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);
const start = { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 };

async function runFilter(parameters: Record<string, unknown>, items: Item[], typeVersion = 2) {
  const node = { name: 'Filter', type: 'n8n-nodes-base.filter', typeVersion, parameters };
  const def = workflow([start, node], [['Start', 'Filter']]);
  expect(engine.validate(def)).toEqual([]);
  return engine.run(def, { nodeName: 'Start', items }, ctx);
}

const people: Item[] = [
  { json: { name: 'Adam', tags: ['vip'], notes: null } },
  { json: { name: 'victor', tags: [], notes: 'some' } },
  { json: { name: 'Sam', notes: 'other' } },
];

describe('n8n-nodes-base.filter v2', () => {
  it('keeps only the items whose conditions hold, on one output', async () => {
    const out = await runFilter(
      {
        conditions: {
          options: { caseSensitive: false, leftValue: '', typeValidation: 'strict' },
          conditions: [
            {
              leftValue: '={{ $json.name }}',
              rightValue: 'V',
              operator: { type: 'string', operation: 'startsWith' },
            },
            {
              leftValue: '={{ $json.tags }}',
              rightValue: 'VIP',
              operator: { type: 'array', operation: 'contains', rightType: 'any' },
            },
          ],
          combinator: 'or',
        },
        options: { ignoreCase: true },
      },
      people,
      2.2,
    );
    expect(out.status).toBe('success');
    expect(jsonOf(out.state, 'Filter')).toEqual([people[0]?.json, people[1]?.json]);
    expect(out.state.runData.Filter?.[0]?.output).toHaveLength(1);
  });

  it('keeps items whose field exists (null does not)', async () => {
    const out = await runFilter(
      {
        conditions: {
          options: { caseSensitive: true, leftValue: '', typeValidation: 'strict' },
          conditions: [
            {
              leftValue: '={{ $json.notes }}',
              rightValue: '',
              operator: { type: 'string', operation: 'exists', singleValue: true },
            },
          ],
          combinator: 'and',
        },
      },
      people,
    );
    expect(jsonOf(out.state, 'Filter').map((j) => j.name)).toEqual(['victor', 'Sam']);
  });

  it('without stored options falls back to the node options (case-sensitive, strict)', async () => {
    const filter = (options: Record<string, unknown>) => ({
      conditions: {
        conditions: [
          {
            leftValue: '={{ $json.name }}',
            rightValue: 'sam',
            operator: { type: 'string', operation: 'equals' },
          },
        ],
        combinator: 'and',
      },
      options,
    });
    expect(jsonOf((await runFilter(filter({}), people)).state, 'Filter')).toEqual([]);
    const ignoring = await runFilter(filter({ ignoreCase: true }), people);
    expect(jsonOf(ignoring.state, 'Filter').map((j) => j.name)).toEqual(['Sam']);
  });
});
