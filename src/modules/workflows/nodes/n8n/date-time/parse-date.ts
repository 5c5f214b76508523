import { DateTime, type DurationLikeObject } from 'luxon';
import { NodeOperationError } from '../../../engine/node-type.js';

/** Seconds below this are a Unix timestamp in seconds, at or above it one in milliseconds (n8n's rule). */
const MILLIS_FROM = 1e12;

/** Text longer than this is not a date: refused before any parser sees it. */
const MAX_DATE_TEXT = 256;

/**
 * n8n's Date & Time v2 `parseDate`: a number or numeric text is a Unix timestamp (seconds or
 * milliseconds), text is ISO 8601 (a bare `yyyy-MM-dd` is that day's start) or follows `fromFormat`
 * (Luxon tokens), in `timezone` (else UTC). Beyond n8n, SQL, RFC 2822 and HTTP dates are read too, as
 * its older moment-based parser did. Anything else is a node error naming the value.
 */
export function parseDate(
  date: unknown,
  options: { timezone?: string | undefined; fromFormat?: string | undefined } = {},
): DateTime {
  const zone = options.timezone || 'utc';
  if (date === null || date === undefined) throw new NodeOperationError('Invalid date type');
  let parsed: DateTime;
  if (typeof date === 'number' || (typeof date === 'string' && isNumeric(date) && !options.fromFormat)) {
    const ts = Number(date);
    if (!Number.isFinite(ts)) throw new NodeOperationError('Invalid numeric timestamp');
    parsed = ts < MILLIS_FROM ? DateTime.fromSeconds(ts, { zone }) : DateTime.fromMillis(ts, { zone });
  } else if (typeof date === 'string') {
    const text = date.trim();
    if (text === '') throw new NodeOperationError('Empty date string');
    if (text.length > MAX_DATE_TEXT)
      throw new NodeOperationError('Invalid date format', {
        description: `A date is at most ${MAX_DATE_TEXT} characters; this one has ${text.length}`,
      });
    if (options.fromFormat) {
      parsed = DateTime.fromFormat(text, options.fromFormat, { zone, setZone: true });
    } else if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
      parsed = DateTime.fromISO(text, { zone }).startOf('day');
    } else {
      parsed = lenient(text, zone);
    }
  } else {
    throw new NodeOperationError('Invalid date type', {
      description: `Expected a date as text or a number, got ${Array.isArray(date) ? 'a list' : typeof date}`,
    });
  }
  if (!parsed.isValid)
    throw new NodeOperationError('Invalid date format', {
      description: `'${String(date).slice(0, 80)}' is not a date${parsed.invalidExplanation ? `: ${parsed.invalidExplanation}` : ''}`,
    });
  return parsed;
}

function isNumeric(text: string): boolean {
  return text.trim() !== '' && !Number.isNaN(Number(text));
}

function lenient(text: string, zone: string): DateTime {
  for (const read of [DateTime.fromISO, DateTime.fromSQL, DateTime.fromRFC2822, DateTime.fromHTTP]) {
    const dt = read(text, { zone });
    if (dt.isValid) return dt;
  }
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return DateTime.fromISO(text, { zone });
  if (EXPLICIT_ZONE.test(text)) return DateTime.fromMillis(ms, { zone });
  // Date.parse reads a zoneless text ("April 11, 2023 2:30 PM") in the process's zone: keep its wall
  // clock and read that in the workflow's zone instead, as n8n does.
  const d = new Date(ms);
  return DateTime.fromObject(
    {
      year: d.getFullYear(),
      month: d.getMonth() + 1,
      day: d.getDate(),
      hour: d.getHours(),
      minute: d.getMinutes(),
      second: d.getSeconds(),
      millisecond: d.getMilliseconds(),
    },
    { zone },
  );
}

/** A time zone or offset written in the text itself (`Z`, `GMT`, `UTC`, `+05:00`, `EST`). */
const EXPLICIT_ZONE = /(?:\d(?:Z)|\b(?:GMT|UTC|UT|[ECMP][SD]T)\b|[+-]\d{2}:?\d{2}\s*$)/i;

/** Adds (or with a negative sign subtracts) a duration; a result outside Luxon's range is a node error. */
export function shift(date: DateTime, unit: string, amount: number, sign: 1 | -1): DateTime {
  if (!Number.isFinite(amount))
    throw new NodeOperationError(`The duration '${amount}' is not a finite number`);
  const change = { [unit]: amount } as DurationLikeObject;
  const result = sign === 1 ? date.plus(change) : date.minus(change);
  if (!result.isValid)
    throw new NodeOperationError(`The duration ${amount} ${unit} is too large`, {
      description: 'The resulting date is outside the range of representable dates',
    });
  return result;
}

/** A Luxon zone name the runtime knows, or a node error naming it. */
export function checkZone(zone: string): string {
  if (!DateTime.now().setZone(zone).isValid)
    throw new NodeOperationError(`The timezone ${zone} is not valid. Please check the timezone.`);
  return zone;
}
