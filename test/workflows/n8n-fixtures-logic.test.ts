import { describe, expect, it } from 'vitest';
import { expectPinnedOutputs, loadFixture, runFixture } from './support/n8n-fixtures.js';

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
];

/**
 * Fixtures holding a parameter n8n's current node no longer defines (n8n ignores it silently): refused
 * here with a 400-style problem naming it, as every unknown parameter is.
 */
const REFUSED: Array<{ file: string; parameter: string }> = [
  // An early IF v2 option; today's IF v2 has `ignoreCase` (the case rule is in conditions.options).
  { file: 'if/IfV2.string.json', parameter: 'nodes[1].parameters.options.caseSensitive' },
];

/**
 * Fixtures that need what this group does not provide yet; each must fail today (validation or run),
 * so the list cannot rot silently: when one starts passing, move it to RUNNABLE.
 */

describe('n8n fixtures: logic nodes', () => {
  it.each(RUNNABLE)('%s gives the pinned output', (file) => expectPinnedOutputs(file));

  it.each(REFUSED)('$file is refused, naming $parameter', async ({ file, parameter }) => {
    await expect(runFixture(loadFixture(file))).rejects.toThrow(parameter);
  });
});
