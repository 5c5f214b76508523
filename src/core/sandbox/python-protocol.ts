/**
 * What a Python interpreter's process (python-child.mjs) may say to the pool, checked on arrival: the
 * process runs untrusted code, so a message of another shape, or larger than the bounds below, is
 * treated as the interpreter failing (it is replaced), never trusted. The child applies the same bounds
 * before sending; a message larger than the child's own heap (--max-old-space-size) cannot be built.
 */

export interface LogLine {
  level: 'log' | 'error';
  message: string;
}

export type Reply =
  | { kind: 'ready' }
  | {
      kind: 'answer';
      id: number;
      ok: true;
      output: string | null;
      logs: LogLine[];
      /** Work the run left scheduled (timers, immediates…), seen when it answered. */
      pending: string[];
    }
  | {
      kind: 'answer';
      id: number;
      ok: false;
      error: string;
      logs: LogLine[];
      broken: boolean;
      oversize: boolean;
    }
  /** Sent once the run's microtasks have run: what is still scheduled then. */
  | { kind: 'settled'; id: number; pending: string[] };

export const LOG_LINES = 200;
export const LOG_CHARS = 2_000;
/** Longest error text the child may send (Python's own messages are cut before). */
const ERROR_CHARS = 10_000;
/** Kinds of pending work named in one message. */
export const PENDING_NAMES = 20;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isId = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;

function logsOf(value: unknown): LogLine[] | null {
  if (!Array.isArray(value) || value.length > LOG_LINES) return null;
  const logs: LogLine[] = [];
  for (const line of value) {
    if (!isObject(line) || (line.level !== 'log' && line.level !== 'error')) return null;
    // One character more: the child marks a cut line with an ellipsis.
    if (typeof line.message !== 'string' || line.message.length > LOG_CHARS + 1) return null;
    logs.push({ level: line.level, message: line.message });
  }
  return logs;
}

function pendingOf(value: unknown): string[] | null {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > PENDING_NAMES) return null;
  return value.every((name) => typeof name === 'string' && name.length <= 100) ? (value as string[]) : null;
}

/** The child's message read as a Reply, or null when it has another shape or passes a bound. */
export function readReply(message: unknown, maxOutputChars: number): Reply | null {
  if (!isObject(message)) return null;
  if (message.ready === true) return { kind: 'ready' };
  if ('settled' in message) {
    const pending = pendingOf(message.pending);
    return isId(message.settled) && pending ? { kind: 'settled', id: message.settled, pending } : null;
  }
  if (!isId(message.id)) return null;
  const logs = logsOf(message.logs);
  if (!logs) return null;
  if (message.ok === true) {
    const { output } = message;
    const pending = pendingOf(message.pending);
    if (output !== null && (typeof output !== 'string' || output.length > maxOutputChars)) return null;
    return pending ? { kind: 'answer', id: message.id, ok: true, output, logs, pending } : null;
  }
  if (message.ok !== false || typeof message.error !== 'string' || message.error.length > ERROR_CHARS)
    return null;
  return {
    kind: 'answer',
    id: message.id,
    ok: false,
    error: message.error,
    logs,
    broken: message.broken === true,
    oversize: message.oversize === true,
  };
}
