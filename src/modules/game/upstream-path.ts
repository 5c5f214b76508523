import { AppError } from '../../core/errors.js';

/** One segment of an upstream path: a caller-supplied value or a literal. */
export type PathSegment = string | number;

/**
 * The upstream path for these segments, with its trailing slash (the game platform's form).
 * Each segment is encoded on its own, so `/`, `?`, `#` and `%` stay inside it; `.`, `..` and
 * empty segments are refused, because URL parsing would remove or climb them (`GroupV2/Name/../1`
 * becomes `GroupV2/1`) and the caller would choose which upstream endpoint is called.
 */
export function upstreamPath(segments: readonly PathSegment[]): string {
  return `/${segments.map(encodeSegment).join('/')}/`;
}

function encodeSegment(segment: PathSegment): string {
  const value = String(segment);
  if (value === '' || value === '.' || value === '..') {
    throw new AppError('VALIDATION_ERROR', `'${value}' cannot be used as a path segment upstream`, {
      fields: [{ field: 'params', message: "must not be empty, '.' or '..'" }],
    });
  }
  return encodeURIComponent(value);
}
