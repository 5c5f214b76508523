import { describe, it } from 'vitest';
import { expectPinnedOutputs } from './support/n8n-fixtures.js';

/**
 * More of n8n's own test workflows for Merge v2, If v1/v2/v2.2 and Switch v1/v2 (provenance in
 * test/fixtures/n8n/SOURCES-flow.md), run as n8n's harness runs them: every node named in pinData
 * must output exactly the pinned items.
 */
const RUNNABLE = [
  'merge/workflow.chooseBranch.json',
  'merge/workflow.combine.multiplex.json',
  'merge/workflow.combine.mergeByPosition.json',
  'merge/workflow.keep_non_matches.json',
  // enrichInput2 without a clash rule: input 2's values win, on input 1's key order (as n8n).
  'merge/workflow.combine.mergeByFields.json',
  // chooseBranch `empty`: one empty item whose lineage reaches both inputs ($('Code').item works).
  'merge/workflow.chooseBranch.empty.paired.items.json',
  'if/v1/IF.number.json',
  'if/v1/IF.string.json',
  'if/v1/IF.date-time.json',
  'if/IfV2.boolean.json',
  'if/IfV2.number.json',
  'if/IfV2.date-time.json',
  'switch/v1/switch.expression.workflow.json',
  'switch/v1/switch.rules.workflow.json',
  'switch/v1/switch.regex.workflow.json',
  'switch/v2/switch.expression.workflow.json',
  'switch/v2/switch.rules.workflow.json',
  'switch/v2/switch.regex.workflow.json',
];

describe('n8n fixtures: Merge, If and Switch', () => {
  it.each(RUNNABLE)('%s gives the pinned output', (file) => expectPinnedOutputs(file));
});
