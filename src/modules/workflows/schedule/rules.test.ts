import { describe, expect, it } from 'vitest';
import { cronProblem, nextFire, scheduleItem, specOf } from './rules.js';

const at = (iso: string) => new Date(iso);
const next = (spec: ReturnType<typeof specOf>, after: string, last: string | null = null) =>
  nextFire(spec, at(after), last ? at(last) : null)?.toISOString();

describe('Schedule Trigger rules', () => {
  it('turns each n8n interval into cron with second 0', () => {
    expect(specOf({ field: 'seconds', secondsInterval: 10 }, 'UTC').cron).toBe('*/10 * * * * *');
    expect(specOf({ field: 'minutes', minutesInterval: 5 }, 'UTC').cron).toBe('0 */5 * * * *');
    expect(specOf({ field: 'hours', hoursInterval: 2, triggerAtMinute: 15 }, 'UTC').cron).toBe(
      '0 15 */2 * * *',
    );
    expect(specOf({ field: 'days', triggerAtHour: 9 }, 'UTC')).toEqual({ cron: '0 0 9 * * *', tz: 'UTC' });
    expect(specOf({ field: 'weeks', triggerAtDay: [5, 1], triggerAtHour: 8 }, 'UTC').cron).toBe(
      '0 0 8 * * 1,5',
    );
    expect(specOf({ field: 'months', monthsInterval: 3, triggerAtDayOfMonth: 15 }, 'UTC').cron).toBe(
      '0 0 0 15 */3 *',
    );
    expect(specOf({ field: 'cronExpression', expression: '*/15 9-17 * * 1-5' }, 'UTC').cron).toBe(
      '0 */15 9-17 * * 1-5',
    );
    expect(specOf({ field: 'days' }, 'UTC')).toEqual({ cron: '0 0 0 * * *', tz: 'UTC' });
  });

  it('gives the first time strictly after now, in the rule’s time zone', () => {
    const spec = specOf({ field: 'days', triggerAtHour: 9 }, 'America/New_York');
    expect(next(spec, '2026-01-15T13:00:00Z')).toBe('2026-01-15T14:00:00.000Z');
    expect(next(spec, '2026-01-15T14:00:00Z')).toBe('2026-01-16T14:00:00.000Z');
    // Summer time: 9:00 in New York is 13:00 UTC.
    expect(next(spec, '2026-07-01T00:00:00Z')).toBe('2026-07-01T13:00:00.000Z');
  });

  it('catches up once after downtime: the next time after now, not the missed ones', () => {
    const spec = specOf({ field: 'minutes', minutesInterval: 5 }, 'UTC');
    expect(next(spec, '2026-01-15T13:47:12Z', '2026-01-15T10:00:00Z')).toBe('2026-01-15T13:50:00.000Z');
  });

  it('fires every N days and every N weeks counted from the last fire, as n8n does', () => {
    const days = specOf({ field: 'days', daysInterval: 3, triggerAtHour: 6 }, 'UTC');
    expect(next(days, '2026-01-10T07:00:00Z', '2026-01-10T06:00:00Z')).toBe('2026-01-13T06:00:00.000Z');
    expect(next(days, '2026-01-10T07:00:00Z')).toBe('2026-01-11T06:00:00.000Z');
    // Every 2 weeks on Monday and Thursday: both days of a fired week, then a week off.
    const weeks = specOf({ field: 'weeks', weeksInterval: 2, triggerAtDay: [1, 4], triggerAtHour: 9 }, 'UTC');
    const monday = '2026-01-05T09:00:00Z';
    expect(next(weeks, monday, monday)).toBe('2026-01-08T09:00:00.000Z');
    expect(next(weeks, '2026-01-08T09:00:00Z', '2026-01-08T09:00:00Z')).toBe('2026-01-19T09:00:00.000Z');
  });

  it('refuses cron expressions that are not cron', () => {
    expect(cronProblem('*/5 * * * *')).toBeNull();
    expect(cronProblem('0 */5 * * * *')).toBeNull();
    expect(cronProblem('every monday')).toMatch(/5 or 6 fields/);
    expect(cronProblem('61 * * * *')).toMatch(/not a valid cron expression/);
    expect(cronProblem('* * * * * * *')).toMatch(/5 or 6 fields/);
  });

  it("emits n8n's fire item", () => {
    expect(scheduleItem(at('2026-03-06T20:05:09Z'), 'America/New_York')).toEqual({
      timestamp: '2026-03-06T15:05:09.000-05:00',
      'Readable date': 'March 6th 2026, 3:05:09 pm',
      'Readable time': '3:05:09 pm',
      'Day of week': 'Friday',
      Year: '2026',
      Month: 'March',
      'Day of month': '06',
      Hour: '15',
      Minute: '05',
      Second: '09',
      Timezone: 'America/New_York (UTC-05:00)',
    });
    expect(scheduleItem(at('2026-03-22T00:00:00Z'), 'UTC')['Readable date']).toBe(
      'March 22nd 2026, 12:00:00 am',
    );
  });
});
