import { describe, it } from 'vitest';
import { expectPinnedOutputs } from './support/n8n-fixtures.js';

/**
 * n8n's own test workflows for the transform nodes (Date & Time, Summarize, Item Lists, Rename Keys,
 * Compare Datasets, Execution Data, Debug Helper; provenance in test/fixtures/n8n/SOURCES-transform.md),
 * run as n8n's harness runs them: every node named in pinData must output exactly the pinned items.
 */
const RUNNABLE = [
  'rename-keys/RenameKeys.workflow.json',
  'date-time/workflow.includeInputFields_v2.json',
  'summarize/workflow.summarize.json',
  'item-lists/workflow.limit.json',
  'item-lists/workflow.summarize.json',
  'item-lists/workflow.splitOutItems.json',
  'debug-helper/ThrowAnError.workflow.json',
  'date-time/workflow.nullDate_v2.json',
  'execution-data/ExecutionData.workflow.json',
  // Its v2 nodes carry `additionalFields` of an early v2 draft: accepted and ignored, as n8n does.
  'date-time/workflow.timestamp_v2.json',
];

describe('n8n fixtures: transform nodes', () => {
  it.each(RUNNABLE)('%s gives the pinned output', (file) => expectPinnedOutputs(file));
});
