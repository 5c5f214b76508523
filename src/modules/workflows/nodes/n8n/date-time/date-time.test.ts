import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

/** Runs one Date & Time node over `items`; the workflow may carry a time zone. */
async function run(
  version: number,
  parameters: Record<string, unknown>,
  items: Item[] = [{ json: {} }],
  timezone?: string,
) {
  const def = workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      { name: 'D', type: 'n8n-nodes-base.dateTime', typeVersion: version, parameters },
    ],
    [['T', 'D']],
  );
  if (timezone) def.settings = { timezone };
  const out = await engine.run(def, { nodeName: 'T', items }, ctx);
  return { out: jsonOf(out.state, 'D'), error: out.state.error };
}

describe('n8n-nodes-base.dateTime v2', () => {
  it('gets the current date in the workflow time zone, with or without the time', async () => {
    // testDeps' clock: 2030-01-02T03:04:05Z, which is still 1 January in New York.
    expect((await run(2, {}, undefined, 'America/New_York')).out).toEqual([
      { currentDate: '2030-01-01T22:04:05.000-05:00' },
    ]);
    expect((await run(2, { includeTime: false, options: { timezone: 'Europe/Paris' } })).out).toEqual([
      { currentDate: '2030-01-02T00:00:00.000+01:00' },
    ]);
  });

  it('adds, subtracts, rounds, extracts and measures', async () => {
    const date = '2024-02-29T10:30:00Z';
    expect(
      (await run(2, { operation: 'addToDate', magnitude: date, duration: 1, timeUnit: 'years' })).out,
    ).toEqual([{ newDate: '2025-02-28T10:30:00.000Z' }]);
    expect(
      (
        await run(2, {
          operation: 'subtractFromDate',
          magnitude: date,
          duration: 2,
          timeUnit: 'hours',
          outputFieldName: 'x',
        })
      ).out,
    ).toEqual([{ x: '2024-02-29T08:30:00.000Z' }]);
    expect((await run(2, { operation: 'roundDate', date, toNearest: 'day' })).out).toEqual([
      { roundedDate: '2024-02-29T00:00:00.000Z' },
    ]);
    expect((await run(2, { operation: 'roundDate', date, mode: 'roundUp' })).out).toEqual([
      { roundedDate: '2024-03-01T00:00:00.000Z' },
    ]);
    expect((await run(2, { operation: 'extractDate', date, part: 'week' })).out).toEqual([{ datePart: 9 }]);
    expect(
      (
        await run(2, {
          operation: 'getTimeBetweenDates',
          startDate: '2024-01-01',
          endDate: date,
          units: ['month', 'day'],
        })
      ).out,
    ).toEqual([{ timeDifference: { months: 1, days: 28.4375 } }]);
    expect(
      (
        await run(2, {
          operation: 'getTimeBetweenDates',
          startDate: '2024-01-01',
          endDate: '2024-01-03',
          options: { isoString: true },
        })
      ).out,
    ).toEqual([{ timeDifference: 'P2D' }]);
  });

  it('formats with Luxon tokens, a source format, and keeps input fields on request', async () => {
    const items = [{ json: { at: '20240315' } }];
    expect(
      (
        await run(
          2,
          {
            operation: 'formatDate',
            date: '={{ $json.at }}',
            format: 'custom',
            customFormat: 'dd LLL yyyy',
            options: { fromFormat: 'yyyyMMdd', includeInputFields: true },
          },
          items,
        )
      ).out,
    ).toEqual([{ at: '20240315', formattedDate: '15 Mar 2024' }]);
    expect((await run(2, { operation: 'formatDate', date: '={{ null }}' })).out).toEqual([
      { formattedDate: null },
    ]);
  });

  it('fails the node with a clear message on an invalid date, a huge duration or a bad zone', async () => {
    expect((await run(2, { operation: 'formatDate', date: 'not a date' })).error?.message).toBe(
      'Invalid date format',
    );
    expect((await run(2, { operation: 'formatDate', date: 'x'.repeat(10_000) })).error?.message).toBe(
      'Invalid date format',
    );
    expect(
      (await run(2, { operation: 'addToDate', magnitude: '2024-01-01', duration: 1e20, timeUnit: 'years' }))
        .error?.message,
    ).toBe('The duration 100000000000000000000 years is too large');
    expect((await run(2, { options: { timezone: 'Mars/Olympus' } })).error?.message).toBe(
      'The timezone Mars/Olympus is not valid. Please check the timezone.',
    );
  });

  it('refuses an unknown unit when the workflow is checked', () => {
    const def = workflow(
      [
        { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
        {
          name: 'D',
          type: 'n8n-nodes-base.dateTime',
          typeVersion: 2,
          parameters: { operation: 'addToDate', timeUnit: 'fortnights' },
        },
      ],
      [['T', 'D']],
    );
    expect(engine.validate(def)[0]?.path).toBe('nodes[1].parameters.timeUnit');
  });
});

describe('n8n-nodes-base.dateTime v1', () => {
  // v1 reads zoneless dates in the process zone, as n8n's does: these run in UTC (n8n's test zone)
  // unless a case names another.
  const before = process.env.TZ;
  beforeAll(() => {
    process.env.TZ = 'UTC';
  });
  afterAll(() => {
    if (before === undefined) delete process.env.TZ;
    else process.env.TZ = before;
  });

  it("reads and writes zoneless dates in the process zone, as moment's defaults do in n8n", async () => {
    process.env.TZ = 'Asia/Tokyo';
    try {
      const calc = await run(1, { action: 'calculate', value: '08/01/2022', duration: 10 });
      expect(calc.out).toEqual([{ data: '2022-08-10T15:00:00.000Z' }]);
      // An ISO date alone is UTC to JavaScript's Date, which `calculate` reads through.
      const iso = await run(1, { action: 'calculate', value: '2022-08-01', duration: 1 });
      expect(iso.out).toEqual([{ data: '2022-08-02T00:00:00.000Z' }]);
      // 2022-09-21T23:00Z is already the 22nd in Tokyo.
      const fmt = await run(1, { value: '1663801200000', options: { fromFormat: 'x' } });
      expect(fmt.out).toEqual([{ data: '09/22/2022' }]);
      // Between zones, moment-timezone reads a non-ISO date as UTC, whatever the process zone.
      const zoned = await run(1, {
        value: '08/01/2022',
        toFormat: 'x',
        options: { fromTimezone: 'US/Hawaii', toTimezone: 'US/Pacific' },
      });
      expect(zoned.out).toEqual([{ data: '1659312000000' }]);
    } finally {
      process.env.TZ = 'UTC';
    }
    const utc = await run(1, { action: 'calculate', value: '08/01/2022', duration: 10 });
    expect(utc.out).toEqual([{ data: '2022-08-11T00:00:00.000Z' }]);
  });

  it('formats with moment tokens, between time zones, from timestamps', async () => {
    const items = [{ json: { d: '2023-05-01T05:18:35.906Z' } }];
    expect((await run(1, { value: '={{ $json.d }}' }, items)).out).toEqual([
      { d: items[0]?.json.d, data: '05/01/2023' },
    ]);
    expect(
      (
        await run(
          1,
          {
            value: '={{ $json.d }}',
            custom: true,
            toFormat: 'YYYY-MM-DD HH:mm [at] Z',
            options: { toTimezone: 'Asia/Tokyo' },
          },
          items,
        )
      ).out[0]?.data,
    ).toBe('2023-05-01 14:18 at +09:00');
    expect((await run(1, { value: 1682918315, toFormat: 'X' })).out).toEqual([{ data: '1682918315' }]);
  });

  it('calculates a date and writes ISO text in UTC; an unreadable date fails the node', async () => {
    expect(
      (
        await run(1, {
          action: 'calculate',
          value: '2023-01-31',
          duration: 1,
          timeUnit: 'months',
          dataPropertyName: 'out.next',
        })
      ).out,
    ).toEqual([{ out: { next: '2023-02-28T00:00:00.000Z' } }]);
    expect((await run(1, { action: 'calculate', value: 'garbage' })).error?.message).toBe(
      'Unrecognized date input. Please specify a format in the "From Format" field.',
    );
  });
});
