import { describe, expect, it } from 'vitest';
import { expectPinnedOutputs, loadFixture, runFixture } from './support/n8n-fixtures.js';

/**
 * n8n's own test workflows for Merge, Split Out, Aggregate, Sort, Limit and Remove Duplicates
 * (test/fixtures/n8n/, provenance in SOURCES-data.md): each node named in pinData must output exactly
 * the pinned items. Several feed their nodes from n8n's harness-only testData node (support file).
 */
const RUNNABLE = [
  'limit/workflow.limit.json',
  'remove-duplicates/workflow.removeDuplicates.json',
  'split-out/workflow.destinationFieldDotNotation.json',
  'aggregate/workflow.aggregate.json',
  'sort/workflow.sort.json',
  'sort/code.sort.json',
  'aggregate/workflow.groupby.json',
  // v1's `fieldsToInclude` as a list of names, as early exports carry it.
  'split-out/workflow.splitOut.json',
  'split-out/workflow.splitOutObject.json',
  'merge/workflow.append.json',
];

/** Fixtures that need what the platform does not have yet; each must still fail today. */
const AWAITING: Array<{ file: string; reason: string }> = [];

/** Fixtures whose pinned output the platform deliberately does not reproduce. */
const DIVERGES = [
  {
    file: 'split-out/workflow.prototypePollution.json',
    reason:
      "destination '__proto__.polluted': this n8n export skips the field silently; newer n8n (and the platform) refuse it",
    error: 'Invalid destination field name',
  },
];

describe('n8n data-node fixtures', () => {
  it.each(RUNNABLE)('%s: pinned nodes output exactly the pinned items', (file) => expectPinnedOutputs(file));

  it.each(AWAITING)('$file awaits: $reason', async ({ file }) => {
    const def = loadFixture(file);
    const run = runFixture(def).then((r) => (r.outcome.status === 'success' ? 'ran' : 'failed'));
    await expect(run.catch(() => 'refused')).resolves.not.toBe('ran');
  });

  it.each(DIVERGES)('$file diverges: $reason', async ({ file, error }) => {
    const { outcome } = await runFixture(loadFixture(file));
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.message).toBe(error);
  });
});
