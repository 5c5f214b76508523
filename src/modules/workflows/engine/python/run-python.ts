import { DateTime } from 'luxon';
import { PythonPool, type PythonRun, PythonSandboxError } from '../../../../core/sandbox/python-pool.js';
import { defaultTimezone } from '../expression-sandbox.js';
import { CodeError, type CodeLimits, type CodeRun, type ExpressionData, guestData } from '../expressions.js';
import { readAnswer } from './answer.js';
import { PYTHON_PRELUDE, PYTHON_PROGRAM } from './prelude.js';

/**
 * The Code node's Python: CPython on WebAssembly (Pyodide) in a pool of confined child processes
 * (core/sandbox/python-pool.ts), one process-wide pool started on first use.
 */

export interface PythonSandboxOptions {
  /** Interpreters alive at once (each loads in seconds and holds tens of MiB). */
  workers: number;
  /** Cap of one interpreter's memory (WebAssembly), in MiB. */
  memoryMb: number;
  /** Python runs one account may have waiting for an interpreter. */
  queuePerAccount?: number;
  /** Told when interpreters start without an OS network namespace (the server's log). */
  onWarning?: (message: string) => void;
}

/** Which of n8n's Python sandboxes the code was written for (`language: python` or `pythonNative`). */
export type PythonFlavour = 'pyodide' | 'native';

const DEFAULTS: PythonSandboxOptions = { workers: 2, memoryMb: 256, queuePerAccount: 20 };
/** Largest answer (items as JSON) a run may return, as for the JavaScript Code node. */
const MAX_OUTPUT_CHARS = 5_000_000;

let options = DEFAULTS;
let shared: PythonPool | undefined;

/** Sets the sizes from configuration; a running pool with other sizes is retired. */
export function configurePythonSandbox(next: PythonSandboxOptions): void {
  if (
    shared &&
    (next.workers !== options.workers ||
      next.memoryMb !== options.memoryMb ||
      next.queuePerAccount !== options.queuePerAccount)
  ) {
    void shared.close();
    shared = undefined;
  }
  options = next;
}

export function pythonSandbox(): PythonPool {
  if (!shared || shared.isClosed)
    shared = new PythonPool({
      workers: options.workers,
      memoryMb: options.memoryMb,
      maxQueuePerTenant: options.queuePerAccount,
      maxOutputChars: MAX_OUTPUT_CHARS,
      onWarning: options.onWarning,
      prelude: PYTHON_PRELUDE,
    });
  return shared;
}

/** Ends the interpreters, if any were started (tests, shutdown); the next run starts new ones. */
export async function closePythonSandbox(): Promise<void> {
  const pool = shared;
  shared = undefined;
  await pool?.close();
}

/** Runs a Code node's Python over its input items; throws CodeError as the JavaScript runner does. */
export async function runPython(
  code: string,
  mode: 'runOnceForAllItems' | 'runOnceForEachItem',
  flavour: PythonFlavour,
  data: ExpressionData,
  limits: CodeLimits,
  tenant: string,
): Promise<CodeRun> {
  // `_('Name')` and `_node["Name"]` read as `$(…)`/`$node[…]` when choosing which nodes' items to send.
  const scanned = code.replace(/(^|[^\w$])_\(/g, '$1$(').replace(/(^|[^\w$])_node\[/g, '$1$node[');
  const base = guestData(data, [scanned], true);
  const zone = data.timezone ?? defaultTimezone();
  const now = DateTime.fromJSDate(data.now, { zone });
  const request = JSON.stringify({
    code,
    mode,
    flavour,
    data: { ...base, now: now.toISO(), today: now.startOf('day').toISO() },
  });
  let run: PythonRun;
  try {
    run = await pythonSandbox().run(PYTHON_PROGRAM, request, limits.timeoutMs, tenant);
  } catch (err) {
    throw new CodeError(
      failureOf(err, limits.timeoutMs),
      err instanceof PythonSandboxError ? err.logs : [],
      undefined,
    );
  }
  const logs: CodeRun['logs'] = run.logs;
  if (run.leftPending.length > 0)
    logs.push({
      level: 'warn',
      message:
        'The Python code left work scheduled (an asyncio task, a callback); it does not run: its interpreter was replaced',
    });
  if (run.output === null) throw new CodeError('The Python code gave no answer', logs, undefined);
  return { items: readAnswer(run.output, logs, data.input?.length ?? 0), logs };
}

function failureOf(err: unknown, timeoutMs: number): string {
  if (!(err instanceof PythonSandboxError)) return err instanceof Error ? err.message : String(err);
  switch (err.limit) {
    case 'time':
      return `Python code took longer than ${timeoutMs} ms (CODE_NODE_TIMEOUT_MS); it was stopped`;
    case 'memory':
      return `${err.message} (PYTHON_MEMORY_MB)`;
    case 'output':
      return `The Python code returned more than ${MAX_OUTPUT_CHARS} characters of items`;
    case 'queue':
      return `${err.message} (PYTHON_WORKERS interpreters, PYTHON_QUEUE_PER_ACCOUNT waiting runs per account)`;
    default:
      return err.message;
  }
}
