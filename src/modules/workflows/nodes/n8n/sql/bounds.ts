import { NodeOperationError } from '../../../engine/node-type.js';

/** A query's longest run unless the node's `queryTimeout` option (seconds) asks for less. */
export const DEFAULT_QUERY_TIMEOUT_MS = 60_000;
/** Rows one node run may return (all its queries); past it the node fails, naming the bound. */
export const DEFAULT_MAX_ROWS = 10_000;
export const MAX_MAX_ROWS = 100_000;
/** Connecting (and a credential test) gives up after this unless `connectionTimeout` says less. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export interface QueryBounds {
  timeoutMs: number;
  maxRows: number;
}

/**
 * A query's bounds: the node's `queryTimeout` (seconds, at most the default) cut to what is left of
 * the execution's `executionTimeout`, and `maxRows` (at most MAX_MAX_ROWS).
 */
export function boundsOf(
  options: { queryTimeout?: number | undefined; maxRows?: number | undefined },
  deadlineAt: number | undefined,
  now = Date.now(),
): QueryBounds {
  const asked = options.queryTimeout && options.queryTimeout > 0 ? options.queryTimeout * 1_000 : Infinity;
  let timeoutMs = Math.min(asked, DEFAULT_QUERY_TIMEOUT_MS);
  if (deadlineAt !== undefined) timeoutMs = Math.min(timeoutMs, deadlineAt - now);
  if (timeoutMs <= 0) throw new NodeOperationError('The execution has no time left for a query');
  const maxRows = Math.min(Math.max(1, Math.floor(options.maxRows ?? DEFAULT_MAX_ROWS)), MAX_MAX_ROWS);
  return { timeoutMs: Math.ceil(timeoutMs), maxRows };
}

export function tooManyRows(maxRows: number): NodeOperationError {
  return new NodeOperationError(`The query returned more than ${maxRows} rows`, {
    description:
      'Select fewer rows (a WHERE or LIMIT), page through them, or raise the maxRows option (at most 100000)',
  });
}

export function timedOut(timeoutMs: number): NodeOperationError {
  return new NodeOperationError(`The query ran past its time limit (${Math.round(timeoutMs / 100) / 10} s)`, {
    description: "Bounded by the node's queryTimeout option and the workflow's executionTimeout",
  });
}

/** A credential's port: its text as a TCP port, else the default. */
export function portOf(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65_535)
    throw new NodeOperationError(`The credential's port '${value}' is not a TCP port`);
  return port;
}

/** n8n credentials keep switches as booleans; stored here as their text. */
export const isOn = (value: string | undefined) => value === 'true' || value === '1';
