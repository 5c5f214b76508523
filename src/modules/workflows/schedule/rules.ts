import cronParser from 'cron-parser';
import { DateTime } from 'luxon';

/** One rule of n8n's Schedule Trigger (`rule.interval[]`), defaults applied. */
export interface IntervalRule {
  field: 'seconds' | 'minutes' | 'hours' | 'days' | 'weeks' | 'months' | 'cronExpression';
  secondsInterval?: number;
  minutesInterval?: number;
  hoursInterval?: number;
  daysInterval?: number;
  weeksInterval?: number;
  monthsInterval?: number;
  /** null: unset, as n8n reads it. */
  triggerAtHour?: number | null;
  triggerAtMinute?: number | null;
  triggerAtDay?: number[];
  triggerAtDayOfMonth?: number | null;
  expression?: string;
}

/**
 * What the scheduler stores per rule: a cron expression (with seconds) in a time zone, and for
 * "every N days / weeks" n8n's recurrence filter over the cron's daily or weekly matches.
 */
export interface ScheduleSpec {
  cron: string;
  tz: string;
  every?: { unit: 'days' | 'weeks'; n: number };
}

/**
 * n8n's conversion of a rule to cron (ScheduleTrigger's `toCronExpression`), except that n8n picks a
 * random second (and minute or hour when unset) per activation to spread load; here they are 0, so a
 * schedule's times are predictable and the same after every activation.
 */
export function specOf(rule: IntervalRule, tz: string): ScheduleSpec {
  const minute = rule.triggerAtMinute ?? 0;
  const hour = rule.triggerAtHour ?? 0;
  switch (rule.field) {
    case 'cronExpression':
      return { cron: withSeconds(rule.expression ?? ''), tz };
    case 'seconds':
      return { cron: `*/${rule.secondsInterval ?? 30} * * * * *`, tz };
    case 'minutes':
      return { cron: `0 */${rule.minutesInterval ?? 5} * * * *`, tz };
    case 'hours':
      return { cron: `0 ${minute} */${rule.hoursInterval ?? 1} * * *`, tz };
    case 'days': {
      const n = rule.daysInterval ?? 1;
      return { cron: `0 ${minute} ${hour} * * *`, tz, ...(n > 1 ? { every: { unit: 'days', n } } : {}) };
    }
    case 'weeks': {
      const days = rule.triggerAtDay ?? [];
      const n = rule.weeksInterval ?? 1;
      const cron = `0 ${minute} ${hour} * * ${days.length === 0 ? '*' : [...days].sort().join(',')}`;
      return { cron, tz, ...(n > 1 ? { every: { unit: 'weeks', n } } : {}) };
    }
    case 'months':
      return {
        cron: `0 ${minute} ${hour} ${rule.triggerAtDayOfMonth ?? 1} */${rule.monthsInterval ?? 1} *`,
        tz,
      };
  }
}

/** n8n accepts five-field cron (minutes first) and six-field (seconds first). */
function withSeconds(expression: string): string {
  const fields = expression.trim().split(/\s+/);
  return fields.length === 5 ? `0 ${fields.join(' ')}` : fields.join(' ');
}

/** Why a cron expression cannot be scheduled, or null. */
export function cronProblem(expression: string): string | null {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) return 'must have 5 or 6 fields (seconds first when 6)';
  try {
    cronParser.parseExpression(withSeconds(expression), { tz: 'UTC' }).next();
    return null;
  } catch (error) {
    return `is not a valid cron expression: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Cron matches looked at for one next time: "every 4 weeks on Monday" needs about 4 × 7. */
const MAX_CANDIDATES = 1_000;

/**
 * The first fire time strictly after `after`: missed times before it are skipped, so a scheduler that
 * was down runs one catch-up, not a burst. `last` is the previous fire, for n8n's every-N filter.
 */
export function nextFire(spec: ScheduleSpec, after: Date, last: Date | null): Date | null {
  const iterator = cronParser.parseExpression(spec.cron, { currentDate: after, tz: spec.tz });
  for (let i = 0; i < MAX_CANDIDATES; i++) {
    let candidate: Date;
    try {
      candidate = iterator.next().toDate();
    } catch {
      return null;
    }
    if (!spec.every || !last || recurs(spec, last, candidate)) return candidate;
  }
  return null;
}

/** n8n's recurrence check: every N days by calendar day, every N weeks by week (any chosen day of a fired week). */
function recurs(spec: ScheduleSpec, last: Date, candidate: Date): boolean {
  const every = spec.every;
  if (!every) return true;
  const from = DateTime.fromJSDate(last, { zone: spec.tz });
  const to = DateTime.fromJSDate(candidate, { zone: spec.tz });
  if (every.unit === 'days')
    return Math.round(to.startOf('day').diff(from.startOf('day'), 'days').days) >= every.n;
  const weeks = Math.round(to.startOf('week').diff(from.startOf('week'), 'weeks').weeks);
  return weeks === 0 || weeks >= every.n;
}

const ordinal = (n: number) => {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th'}`;
};

/** The item a Schedule Trigger emits, in n8n's fields (n8n formats them with moment). */
export function scheduleItem(at: Date, tz: string): Record<string, string> {
  const t = DateTime.fromJSDate(at, { zone: tz });
  const time = `${t.toFormat('h:mm:ss')} ${t.toFormat('a').toLowerCase()}`;
  return {
    timestamp: t.toISO() ?? at.toISOString(),
    'Readable date': `${t.toFormat('MMMM')} ${ordinal(t.day)} ${t.toFormat('yyyy')}, ${time}`,
    'Readable time': time,
    'Day of week': t.toFormat('cccc'),
    Year: t.toFormat('yyyy'),
    Month: t.toFormat('MMMM'),
    'Day of month': t.toFormat('dd'),
    Hour: t.toFormat('HH'),
    Minute: t.toFormat('mm'),
    Second: t.toFormat('ss'),
    Timezone: `${tz} (UTC${t.toFormat('ZZ')})`,
  };
}
