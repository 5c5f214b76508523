import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

async function rename(parameters: Record<string, unknown>, json: Record<string, unknown>) {
  const def = workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      { name: 'R', type: 'n8n-nodes-base.renameKeys', typeVersion: 1, parameters },
    ],
    [['T', 'R']],
  );
  const out = await engine.run(def, { nodeName: 'T', items: [{ json: json as never }] }, ctx);
  return { out: jsonOf(out.state, 'R'), error: out.state.error };
}

const regex = (searchRegex: string, replaceRegex: string, options: Record<string, unknown> = {}) => ({
  additionalOptions: { regexReplacement: { replacements: [{ searchRegex, replaceRegex, options }] } },
});

describe('n8n-nodes-base.renameKeys', () => {
  it('renames by regular expression with captures, case and depth', async () => {
    const json = { Name_a: 1, deep: { name_b: 2, list: [{ name_c: 3 }] } };
    expect((await rename(regex('name_(\\w)', 'n$1', { caseInsensitive: true }), json)).out).toEqual([
      { na: 1, deep: { nb: 2, list: [{ nc: 3 }] } },
    ]);
    expect((await rename(regex('name_(\\w)', 'n$1', { depth: 0 }), json)).out).toEqual([json]);
  });

  it('refuses a backtracking pattern and an invalid one with a node error', async () => {
    expect((await rename(regex('(a)\\1', 'x'), { aa: 1 })).error?.message).toBe(
      'The regular expression /(a)\\1/ is not supported here',
    );
    expect((await rename(regex('(', 'x'), { a: 1 })).error?.message).toMatch(/^Invalid regular expression/);
  });

  it("never writes a key into an object's prototype", async () => {
    const { error } = await rename({ keys: { key: [{ currentKey: 'a', newKey: '__proto__.x' }] } }, { a: 1 });
    expect(error?.message).toBe("Invalid new key name '__proto__.x'");
  });
});
