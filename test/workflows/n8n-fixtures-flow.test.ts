import { describe, expect, it } from 'vitest';
import { expectedOutputs, loadFixture, runFixture } from './support/n8n-fixtures.js';

/**
 * More of n8n's own test workflows for Merge v2 and If v1/v2.2 (provenance in
 * test/fixtures/n8n/SOURCES-flow.md), run as n8n's harness runs them: every node named in pinData
 * must output exactly the pinned items.
 */
const RUNNABLE = [
  'merge/workflow.chooseBranch.json',
  'merge/workflow.combine.multiplex.json',
  'merge/workflow.combine.mergeByPosition.json',
  'if/v1/IF.number.json',
  'if/IfV2.boolean.json',
];

describe('n8n fixtures: Merge and If', () => {
  it.each(RUNNABLE)('%s gives the pinned output', async (file) => {
    const def = loadFixture(file);
    const expected = expectedOutputs(def);
    expect(Object.keys(expected).length).toBeGreaterThan(0);
    const { outcome, outputs } = await runFixture(def);
    expect(outcome.state.error).toBeNull();
    for (const [node, items] of Object.entries(expected)) expect(outputs[node], node).toEqual(items);
  });
});
