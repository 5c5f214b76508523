import { describe, expect, it } from 'vitest';
import { expectPinnedOutputs, fixturePasses, inProcessZone, PROCESS_ZONES } from './support/n8n-fixtures.js';

/**
 * More of n8n's own test workflows for Date & Time and Compare Datasets (provenance in
 * test/fixtures/n8n/SOURCES-dates.md), run as n8n's harness runs them: every node named in pinData
 * must output exactly the pinned items.
 */
const RUNNABLE = [
  'date-time/workflow.timestamp.json',
  'date-time/workflow.luxonDateTime.json',
  'date-time/workflow.extractDate_timezone.json',
  'date-time/DateTimeWorkflowV2.json',
  // v1 reads a non-ISO date in the process zone (UTC) and writes it in the workflow's zone: n8n's default
  // America/New_York when the workflow names none, as n8n's harness runs it.
  'date-time/DateTimeWorkflow.test.json',
  // An export of n8n's v2 before release: its add/subtract nodes name the date `addToDate`/`subtractFromDate`.
  'date-time/node_360_quick_overhaul_of_date_and_time_node (5).json',
  'compare-datasets/workflow.compareDatasets.json',
  'compare-datasets/workflow.compareDatasets.fuzzy.missing_keys.json',
  'compare-datasets/workflow.compareDatasets.mix-falsy-values.json',
  'compare-datasets/workflow.compareDatasets.skipFields.json',
  // Its v2.1 node fails under continueOnFail and passes input A through (n8n's engine rule).
  'compare-datasets/workflow.update_2_2.json',
];

/**
 * Date & Time v1 fixtures pinned by a run in the Europe/Berlin process zone: they run in it
 * (PROCESS_ZONES in support/n8n-harness.ts). n8n's own DateTime suite runs only in UTC (it skips itself
 * in any other zone), where these pins do not hold.
 */
const BERLIN_PROCESS = Object.keys(PROCESS_ZONES);

/**
 * An earlier state of DateTimeWorkflow.test.json (above, which passes): its `calculate` pins are UTC
 * values (1 August + 10 days is `2022-08-11T00:00:00.000Z`) and its `format` pins Berlin ones
 * (2022-09-21T22:00Z is `09/22/2022`), so no process zone gives them all; it fails in both.
 */
const MIXED_ZONES = 'date-time/DateTimeWorklfow.test.json';

describe('n8n fixtures: Date & Time and Compare Datasets', () => {
  it.each(RUNNABLE)('%s gives the pinned output', (file) => expectPinnedOutputs(file));

  it('the fixtures pinned in Berlin run in a Berlin process zone', async () => {
    expect(BERLIN_PROCESS).toHaveLength(3);
    const seen = await inProcessZone('Europe/Berlin', async () =>
      new Date('2022-08-01T00:00:00').toISOString(),
    );
    expect(seen).toBe('2022-07-31T22:00:00.000Z');
  });

  it.each(BERLIN_PROCESS)('%s gives the pinned output in its process zone', (file) =>
    expectPinnedOutputs(file),
  );

  it(`${MIXED_ZONES} awaits: its pins mix UTC and Berlin values`, async () => {
    expect(await fixturePasses(MIXED_ZONES, {}, 'Europe/Berlin')).toBe(false);
  });

  // The same files in a UTC process give UTC values, as n8n's v1 does: the zone is the process's.
  it.each([...BERLIN_PROCESS, MIXED_ZONES])('%s does not match its pins in a UTC process', async (file) => {
    expect(await fixturePasses(file, {}, 'UTC')).toBe(false);
  });
});
