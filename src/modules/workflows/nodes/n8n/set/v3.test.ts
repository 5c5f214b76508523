import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item, RunContext } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);
const start = { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 };

async function runSet(
  parameters: Record<string, unknown>,
  items: Item[],
  typeVersion = 3.4,
  mode: RunContext['mode'] = 'trigger',
) {
  const def = workflow(
    [start, { name: 'Set', type: 'n8n-nodes-base.set', typeVersion, parameters }],
    [['Start', 'Set']],
  );
  expect(engine.validate(def)).toEqual([]);
  return engine.run(def, { nodeName: 'Start', items }, { ...ctx, mode });
}

const assign = (name: string, type: string, value: unknown) => ({ id: name, name, type, value });
const input: Item[] = [{ json: { name: 'Ada', age: 36, address: { city: 'London', zip: 'N1' }, n: '42' } }];

describe('n8n-nodes-base.set v3.x', () => {
  it('converts assignments to their types, as n8n does', async () => {
    const out = await runSet(
      {
        assignments: {
          assignments: [
            assign('s', 'string', '={{ $json.age }}'),
            assign('o', 'string', '={{ $json.address }}'),
            assign('n', 'number', '={{ $json.n }}'),
            assign('b', 'boolean', 'FALSE'),
            assign('a', 'array', "['x', 'y']"),
            assign('obj', 'object', '{a: 1}'),
            assign('deep.path', 'string', 'v'),
          ],
        },
      },
      input,
    );
    expect(out.state.error).toBeNull();
    expect(jsonOf(out.state, 'Set')).toEqual([
      {
        s: '36',
        o: '{"city":"London","zip":"N1"}',
        n: 42,
        b: false,
        a: ['x', 'y'],
        obj: { a: 1 },
        deep: { path: 'v' },
      },
    ]);
  });

  it('fails a value that does not convert, or keeps it with ignoreConversionErrors', async () => {
    const params = { assignments: { assignments: [assign('n', 'number', '={{ $json.name }}')] } };
    const failed = await runSet(params, input);
    expect(failed.state.error).toMatchObject({
      message: "'n' expects a number but we got 'Ada' [item 0]",
      description: expect.stringContaining('Ignore Type Conversion Errors'),
    });
    const kept = await runSet({ ...params, options: { ignoreConversionErrors: true } }, input);
    expect(jsonOf(kept.state, 'Set')).toEqual([{ n: 'Ada' }]);
  });

  it('keeps input fields only with includeOtherFields: all, selected or all except', async () => {
    const assignments = { assignments: [assign('test', 'string', 'foo')] };
    const run = async (extra: Record<string, unknown>) =>
      jsonOf((await runSet({ assignments, ...extra }, input)).state, 'Set');
    expect(await run({})).toEqual([{ test: 'foo' }]);
    expect(await run({ includeOtherFields: true })).toEqual([{ ...input[0]?.json, test: 'foo' }]);
    expect(
      await run({ includeOtherFields: true, include: 'selected', includeFields: 'name, address.city' }),
    ).toEqual([{ name: 'Ada', city: 'London', test: 'foo' }]);
    expect(
      await run({ includeOtherFields: true, include: 'except', excludeFields: 'age,address.zip' }),
    ).toEqual([{ name: 'Ada', address: { city: 'London' }, n: '42', test: 'foo' }]);
  });

  it('writes a dotted name as one key with dotNotation off', async () => {
    const out = await runSet(
      { assignments: { assignments: [assign('a.b', 'number', 1)] }, options: { dotNotation: false } },
      input,
    );
    expect(jsonOf(out.state, 'Set')).toEqual([{ 'a.b': 1 }]);
  });

  it('builds the item from JSON in raw mode', async () => {
    const out = await runSet(
      { mode: 'raw', jsonOutput: '={ "who": "{{ $json.name }}", "tags": ["a"] }', includeOtherFields: true },
      input,
    );
    expect(jsonOf(out.state, 'Set')).toEqual([{ ...input[0]?.json, who: 'Ada', tags: ['a'] }]);
    const bad = await runSet({ mode: 'raw', jsonOutput: '[1, 2]' }, input);
    expect(bad.state.error?.message).toBe("The 'JSON Output' in item 0 does not contain a valid JSON object");
  });

  it('repairs trailing commas in raw JSON in linear time', async () => {
    const out = await runSet({ mode: 'raw', jsonOutput: '{"a": [1, 2,], "b": 3,},,' }, input);
    expect(jsonOf(out.state, 'Set')).toEqual([{ a: [1, 2], b: 3 }]);
    // `/,+$/` took seconds on a long run of commas that does not end the text.
    const started = Date.now();
    const bad = await runSet({ mode: 'raw', jsonOutput: `{${','.repeat(200_000)}x` }, input);
    expect(bad.state.error?.message).toBe("The 'JSON Output' in item 0 contains invalid JSON");
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('reads 3.0–3.2 fields.values with include none', async () => {
    const out = await runSet(
      {
        fields: {
          values: [
            { name: 'city', stringValue: '={{ $json.address.city }}' },
            { name: 'n', type: 'numberValue', numberValue: '={{ $json.n }}' },
            { name: 'flag', type: 'booleanValue' },
            { name: 'o', type: 'objectValue', objectValue: '={ "age": {{ $json.age }} }' },
          ],
        },
        include: 'none',
      },
      input,
      3.2,
    );
    expect(jsonOf(out.state, 'Set')).toEqual([{ city: 'London', n: 42, flag: true, o: { age: 36 } }]);
  });

  it('refuses a parameter of another version and prototype keys', async () => {
    const validate = (typeVersion: number, parameters: Record<string, unknown>) =>
      engine
        .validate(workflow([start, { name: 'Set', type: 'n8n-nodes-base.set', typeVersion, parameters }], []))
        .map((p) => p.path);
    expect(validate(3.2, { includeOtherFields: true })).toContain('nodes[1].parameters.includeOtherFields');
    expect(validate(3.3, { fields: { values: [] } })).toContain('nodes[1].parameters.fields');
    expect(validate(3.4, { options: { includeBinary: true } })).toContain(
      'nodes[1].parameters.options.includeBinary',
    );
    const out = await runSet({ assignments: { assignments: [assign('__proto__.x', 'string', 'y')] } }, input);
    expect(out.status).toBe('error');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('duplicates items only in manual runs', async () => {
    const params = {
      assignments: { assignments: [assign('a', 'number', 1)] },
      duplicateItem: true,
      duplicateCount: 2,
    };
    expect(jsonOf((await runSet(params, input, 3.4, 'manual')).state, 'Set')).toHaveLength(3);
    expect(jsonOf((await runSet(params, input, 3.4, 'webhook')).state, 'Set')).toHaveLength(1);
  });
});
