import { describe, expect, it } from 'vitest';
import { expectPinnedOutputs, fixturePasses } from './support/n8n-fixtures.js';

/**
 * More of n8n's own test workflows for Summarize and Item Lists (provenance in
 * test/fixtures/n8n/SOURCES-lists.md), run as n8n's harness runs them: every node named in pinData
 * must output exactly the pinned items.
 */
const RUNNABLE = [
  'summarize/workflow.summarize_countWithEmpty.json',
  'summarize/workflow.summarize_datatypes.json',
  'item-lists/workflow.removeDuplicates.json',
  'item-lists/workflow.sort.json',
  'item-lists/workflow.concatenate_pairedItems.json',
  // v3.1 compares values of different types without refusing them ("1" and 1 differ).
  'item-lists/workflow.removeDuplicates_3_1.json',
  'item-lists/workflow.update_3.json',
  // v2 nodes that fail under continueOnFail pass their input through (n8n's engine rule, passInputOnFail).
  'item-lists/workflow.splitOutItems.split_object.json',
  // v2 refuses a missing field (input passed through); v2.1 splits, aggregates and summarizes it as empty.
  'item-lists/workflow.update_2_1.json',
];

/** Fixtures that cannot pass, each with its reason; each must still fail (so the list cannot rot). */
const AWAITING: Array<{ file: string; reason: string }> = [];

describe('n8n fixtures: Summarize and Item Lists', () => {
  it.each(RUNNABLE)('%s gives the pinned output', (file) => expectPinnedOutputs(file));

  it.each(AWAITING)('$file awaits: $reason', async ({ file }) => {
    expect(await fixturePasses(file)).toBe(false);
  });
});
