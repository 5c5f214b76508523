import { describe, it } from 'vitest';
import { expectPinnedOutputs } from './support/n8n-fixtures.js';

/**
 * n8n's own test workflows for Set, IF, Filter and Switch (test/fixtures/n8n/SOURCES-logic.md), run
 * unmodified: every node named in pinData must output exactly the pinned items.
 */
const RUNNABLE = [
  'set/Set.workflow.json',
  'set/Set.workflow.number.json',
  'set/Set.workflow.null_values.json',
  // '=3,14' (a leading = without {{ }}) is an expression giving the text '3,14', as in n8n.
  'set/Set.v3_3.workflow.json',
  'filter/workflow_v2.json',
  'switch/switch.rules.workflow.json',
  'switch/switch.expression.workflow.json',
  'switch/switch.regex.workflow.json',
  'if/IfV2.other.json',
  // `options.caseSensitive`, IF v2's first name for the case option: accepted (false = ignore case).
  'if/IfV2.string.json',
];

describe('n8n fixtures: logic nodes', () => {
  it.each(RUNNABLE)('%s gives the pinned output', (file) => expectPinnedOutputs(file));
});
