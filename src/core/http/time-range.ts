import { AppError } from '../errors.js';
import type { ListQuery } from './list-query.js';

const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** `from` (inclusive) and `to` (exclusive) as ISO strings comparable with stored timestamps. */
export interface TimeRange {
  from: string | null;
  to: string | null;
}

export function instant(field: string, value: string | number | undefined): string | null {
  if (value === undefined) return null;
  const text = String(value);
  const ms = ISO.test(text) ? Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text) : Number.NaN;
  if (Number.isNaN(ms))
    throw new AppError('VALIDATION_ERROR', 'Invalid list parameters', {
      fields: [{ field, message: 'must be an ISO 8601 date or date-time' }],
    });
  return new Date(ms).toISOString();
}

/**
 * Takes `from` and `to` out of a parsed list query's filters (they are ranges, not equalities) and
 * returns them as instants; the other filters stay for runList.
 */
export function takeTimeRange(query: ListQuery): TimeRange {
  const { from, to, ...rest } = query.filters;
  query.filters = rest;
  return { from: instant('from', from), to: instant('to', to) };
}
