import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../engine/testing.js';
import type { Item } from '../engine/types.js';
import { WorkflowEngine } from '../engine/workflow-engine.js';
import { resolveNodeAlias } from './aliases.js';
import { defaultNodeRegistry } from './index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);
const start = { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 };
const MISSING = Symbol('missing');

/** Runs the short `if` with one condition on `$json.v` for each value; true per item (output 0). */
async function holds(operation: string, values: unknown[], value2?: unknown) {
  const condition = { value1: '={{ $json.v }}', operation, ...(value2 !== undefined ? { value2 } : {}) };
  const def = workflow(
    [start, { name: 'If', type: 'if', parameters: { conditions: [condition] } }],
    [['Start', 'If']],
  );
  expect(engine.validate(def)).toEqual([]);
  const items = values.map((v, i) => ({ json: v === MISSING ? { i } : { i, v } })) as Item[];
  const out = await engine.run(def, { nodeName: 'Start', items }, ctx);
  if (out.status !== 'success') return out.state.error?.message;
  const yes = new Set(jsonOf(out.state, 'If', 0).map((j) => j.i));
  return values.map((_, i) => yes.has(i));
}

describe('short if → If v2.2: the old answers for the values each operation is for', () => {
  it.each([
    // operation, value2, values, the old node's answers
    ['equals', 'a', ['a', 'A', 'b', MISSING], [true, false, false, false]],
    ['equals', 1, [1, '1', 2, '1.0'], [true, true, false, false]],
    ['equals', 'true', [true, 'true', false], [true, true, false]],
    ['notEquals', 'a', ['a', 'b', MISSING], [false, true, true]],
    ['gt', 100, [500, '500', 5, 100, MISSING, null], [true, true, false, false, false, false]],
    ['gte', 100, [100, 99], [true, false]],
    ['lt', 20, [19, 20, '3', MISSING], [true, false, true, false]],
    ['lte', 20, [20, 21], [true, false]],
    ['contains', 'ell', ['hello', 'help', MISSING], [true, false, false]],
    ['contains', 'a', [['a', 'b']], [true]],
    ['notContains', 'ell', ['hello', 'help'], [false, true]],
    ['startsWith', 'docs:', ['docs:x', 'flow:x', MISSING], [true, false, false]],
    ['endsWith', '.pdf', ['a.pdf', 'a.PDF'], [true, false]],
    ['isEmpty', undefined, ['', MISSING, null, 'x', 0, false], [true, true, true, false, false, false]],
    ['isNotEmpty', undefined, ['', MISSING, 'x', 0], [false, false, true, true]],
    [
      'isTrue',
      undefined,
      [true, 'true', false, 'TRUE', 1, 'yes', MISSING],
      [true, true, false, false, false, false, false],
    ],
    ['isFalse', undefined, [false, 'false', true, 0, MISSING, ''], [true, true, false, false, false, false]],
  ])('%s %j', async (operation, value2, values, expected) => {
    expect(await holds(operation, values, value2)).toEqual(expected);
  });

  it('combine any → or', async () => {
    const parameters = {
      conditions: [
        { value1: '={{ $json.v }}', operation: 'equals', value2: 'a' },
        { value1: '={{ $json.v }}', operation: 'equals', value2: 'b' },
      ],
      combine: 'any',
    };
    const def = workflow([start, { name: 'If', type: 'if', parameters }], [['Start', 'If']]);
    const items = ['a', 'b', 'c'].map((v) => ({ json: { v } }));
    const out = await engine.run(def, { nodeName: 'Start', items }, ctx);
    expect(jsonOf(out.state, 'If', 0)).toEqual([{ v: 'a' }, { v: 'b' }]);
    expect(jsonOf(out.state, 'If', 1)).toEqual([{ v: 'c' }]);
  });

  // Where mixed-type values now get n8n's answer (docs/decisions.md lists them); pinned so a change is seen.
  it.each([
    ['contains', 'urgent', [['non-urgent']], [true]],
    ['isEmpty', undefined, [[], {}], [false, false]],
    ['equals', '', [MISSING], [true]],
    ['lt', 1, ['', true], [true, false]],
  ])('mixed-type edge: %s %j', async (operation, value2, values, expected) => {
    expect(await holds(operation, values, value2)).toEqual(expected);
  });

  it('mixed-type edge: a number comparison on text that is no number is an error', async () => {
    expect(await holds('gt', ['abc'], 5)).toBe(
      "Conversion error: the string 'abc' can't be converted to a number [condition 0, item 0]",
    );
  });
});

describe('short switch → Switch v3.2', () => {
  const rule = (value2: string) => ({
    conditions: [{ value1: '={{ $json.v }}', operation: 'startsWith', value2 }],
  });

  async function route(parameters: Record<string, unknown>, values: string[]) {
    const def = workflow([start, { name: 'S', type: 'switch', parameters }], [['Start', 'S']]);
    expect(engine.validate(def)).toEqual([]);
    const items = values.map((v) => ({ json: { v } }));
    const out = await engine.run(def, { nodeName: 'Start', items }, ctx);
    const outputs = out.state.runData.S?.[0]?.output ?? [];
    return outputs.map((o) => o.map((i) => i.json.v));
  }

  it('routes by the first matching rule, with an extra output for the rest', async () => {
    const parameters = { rules: [rule('a'), rule('ab')], fallbackOutput: 'extra' };
    expect(await route(parameters, ['ab', 'b', 'a'])).toEqual([['ab', 'a'], [], ['b']]);
  });

  it('drops unmatched items by default and sends to every matching rule when asked', async () => {
    expect(await route({ rules: [rule('a'), rule('ab')] }, ['ab', 'b'])).toEqual([['ab'], []]);
    const all = { rules: [rule('a'), rule('ab')], allMatchingOutputs: true };
    expect(await route(all, ['ab', 'b'])).toEqual([['ab'], ['ab']]);
  });
});

describe('stored type', () => {
  const node = (type: string, parameters: Record<string, unknown>) =>
    resolveNodeAlias({ id: 'n', name: 'N', type, typeVersion: 1, position: [0, 0], parameters });

  it("if and switch, short or as the platform nodes saved before, become n8n's", () => {
    const conditions = [{ value1: '={{ $json.n }}', operation: 'gt', value2: 5 }];
    for (const type of ['if', 'n8n-nodes-platform.if']) {
      const resolved = node(type, { conditions });
      expect([resolved.type, resolved.typeVersion]).toEqual(['n8n-nodes-base.if', 2.2]);
      expect(resolved.parameters).toEqual({
        conditions: {
          options: { caseSensitive: true, leftValue: '', typeValidation: 'loose', version: 2 },
          conditions: [
            {
              id: 'c0',
              leftValue: '={{ $json.n }}',
              rightValue: 5,
              operator: { type: 'number', operation: 'gt' },
            },
          ],
          combinator: 'and',
        },
        looseTypeValidation: true,
        options: {},
      });
    }
    for (const type of ['switch', 'n8n-nodes-platform.switch']) {
      const resolved = node(type, { rules: [{ conditions }], fallbackOutput: 'extra' });
      expect([resolved.type, resolved.typeVersion]).toEqual(['n8n-nodes-base.switch', 3.2]);
      expect(resolved.parameters).toMatchObject({
        options: { fallbackOutput: 'extra' },
        looseTypeValidation: true,
      });
    }
  });

  it('a shape the old node refused is kept as given, and refused', () => {
    expect(node('if', { conditions: [] }).parameters).toEqual({ conditions: [] });
    expect(node('switch', { rules: [] }).parameters).toEqual({ rules: [] });
    expect(
      node('if', { conditions: [{ value1: 1, operation: 'isTrue' }], combine: 'some' }).parameters,
    ).toEqual({
      conditions: [{ value1: 1, operation: 'isTrue' }],
      combine: 'some',
    });
  });
});
