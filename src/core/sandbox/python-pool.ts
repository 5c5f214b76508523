import { type ChildProcess, fork } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Runs Python (CPython 3 on WebAssembly, Pyodide) in child processes (python-child.mjs), each under Node's
 * permission model (it may read only its own file and Pyodide's, spawn nothing, start no worker), with an
 * empty environment and no network: a small pool of warm interpreters, started on first use (loading one
 * takes seconds), each running one program at a time.
 *
 * Bounds: a run that passes its deadline has its process killed (and replaced); the WebAssembly memory
 * of an interpreter is capped (`memoryMb`: Python raises MemoryError) and its JavaScript heap by
 * --max-old-space-size; waiting runs are bounded in number and in time.
 *
 * Isolation: every run gets a fresh globals dict, and the modules it imported are dropped after it. An
 * interpreter, once used, serves one tenant (an account) only: another tenant gets a fresh interpreter,
 * one idle interpreter of another tenant being ended for it when the pool is full. So no Python state
 * (a module attribute, a monkey-patched builtin) crosses accounts.
 */

export interface PythonPoolOptions {
  /** Most interpreters alive at once. */
  workers: number;
  /** Cap of one interpreter's WebAssembly memory, in MiB. */
  memoryMb: number;
  /** Python source run before each program, in its globals. */
  prelude: string;
  /** Longest a run may wait for an interpreter (loading included); default 120 s. */
  maxWaitMs?: number;
  /** Runs waiting beyond this are refused; default 100. */
  maxQueue?: number;
}

export type PythonLimit = 'time' | 'memory' | 'queue' | 'crash';

export class PythonSandboxError extends Error {
  constructor(
    message: string,
    readonly limit: PythonLimit,
  ) {
    super(message);
    this.name = 'PythonSandboxError';
  }
}

export interface PythonRun {
  /** What the program left in `__output__` (null if nothing). */
  output: string | null;
  logs: Array<{ level: string; message: string }>;
}

interface Job {
  id: number;
  tenant: string;
  program: string;
  input: string;
  timeoutMs: number;
  resolve(run: PythonRun): void;
  reject(error: Error): void;
  waitTimer: NodeJS.Timeout | null;
}

interface Slot {
  worker: ChildProcess;
  ready: boolean;
  /** The tenant this interpreter has served (null: never used). */
  tenant: string | null;
  job: Job | null;
  killer: NodeJS.Timeout | null;
  idle: NodeJS.Timeout | null;
  gone: boolean;
}

type Reply =
  | { ready: true }
  | { id: number; ok: true; output: string | null; logs: PythonRun['logs'] }
  | { id: number; ok: false; error: string; logs: PythonRun['logs']; broken?: boolean };

const CHILD_URL = new URL('./python-child.mjs', import.meta.url);
/** Node 22+ names the permission model `--permission`; Node 20 `--experimental-permission`. */
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission')
  ? '--permission'
  : '--experimental-permission';
const IDLE_MS = 5 * 60_000;

/**
 * How an interpreter's process is started: its script, Node's flags (the permission model: it may read
 * only its own file and Pyodide's; no child processes, workers or addons; a JavaScript heap cap) and
 * Pyodide's entry module. Exported for the tests that check the process's confinement.
 */
export function pythonChildCommand(): { script: string; execArgv: string[]; pyodideEntry: string } {
  const script = realpathSync(fileURLToPath(CHILD_URL));
  const pyodideDir = dirname(realpathSync(createRequire(import.meta.url).resolve('pyodide')));
  return {
    script,
    execArgv: [
      PERMISSION_FLAG,
      `--allow-fs-read=${script}`,
      `--allow-fs-read=${pyodideDir}${sep}`,
      '--max-old-space-size=128',
      '--no-warnings',
    ],
    pyodideEntry: join(pyodideDir, 'pyodide.mjs'),
  };
}

export class PythonPool {
  private readonly slots: Slot[] = [];
  private readonly waiting: Job[] = [];
  private nextId = 1;
  private closed = false;
  /** Interpreters that failed to start in a row: past two, waiting runs fail instead of respawning. */
  private startFailures = 0;

  constructor(private readonly options: PythonPoolOptions) {}

  /** Runs `program` (after the prelude) with `__input__ = input`, for `tenant`, within `timeoutMs`. */
  run(program: string, input: string, timeoutMs: number, tenant = 'default'): Promise<PythonRun> {
    if (this.closed) return Promise.reject(new PythonSandboxError('the Python sandbox is closed', 'crash'));
    if (this.waiting.length >= (this.options.maxQueue ?? 100))
      return Promise.reject(new PythonSandboxError('the Python sandbox is busy; try again', 'queue'));
    return new Promise<PythonRun>((resolve, reject) => {
      const job: Job = {
        id: this.nextId++,
        tenant,
        program,
        input,
        timeoutMs,
        resolve,
        reject,
        waitTimer: null,
      };
      job.waitTimer = setTimeout(() => {
        const at = this.waiting.indexOf(job);
        if (at < 0) return;
        this.waiting.splice(at, 1);
        reject(new PythonSandboxError('no Python interpreter became free in time; try again', 'queue'));
      }, this.options.maxWaitMs ?? 120_000);
      job.waitTimer.unref();
      this.waiting.push(job);
      this.dispatch();
    });
  }

  /** Starts up to `count` interpreters in the background (each takes seconds to load). */
  warm(count = 1): void {
    while (!this.closed && this.slots.length < Math.min(count, this.options.workers)) this.spawn();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Interpreters alive (for tests). */
  get size(): number {
    return this.slots.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) {
      if (job.waitTimer) clearTimeout(job.waitTimer);
      job.reject(new PythonSandboxError('the Python sandbox is closed', 'crash'));
    }
    await Promise.all(
      this.slots.slice().map((slot) => this.retire(slot, 'the Python sandbox is closed', 'crash')),
    );
  }

  /**
   * Serves waiting runs in arrival order. A tenant holds at most all interpreters but one (at least one),
   * so another tenant always finds room; one whose share is busy waits for it. A run needing a fresh
   * interpreter gets one loading, a new one, or one in place of another tenant's idle interpreter (that
   * tenant's runs ahead of it in the queue were served first, its later ones wait their turn).
   */
  private dispatch(): void {
    if (this.closed) return;
    const cap = Math.max(1, this.options.workers - 1);
    let freshWanted = 0;
    for (const job of this.waiting.slice()) {
      const idle = this.slots.filter((s) => s.ready && !s.job && !s.gone);
      const own = idle.find((s) => s.tenant === job.tenant);
      const held = this.slots.filter((s) => s.tenant === job.tenant && !s.gone).length;
      const slot = own ?? (held < cap ? idle.find((s) => s.tenant === null) : undefined);
      if (slot) {
        this.waiting.splice(this.waiting.indexOf(job), 1);
        this.start(slot, job);
        continue;
      }
      if (held >= cap) continue;
      freshWanted++;
      const loading = this.slots.filter((s) => !s.ready && !s.gone).length;
      if (loading >= freshWanted) continue;
      if (this.slots.length < this.options.workers) {
        this.spawn();
        continue;
      }
      const other = idle.find((s) => s.tenant !== job.tenant);
      if (other) {
        // Started first, so that the dispatch the retirement runs counts it as loading.
        this.spawn();
        void this.retire(other, 'replaced', 'crash');
      }
    }
  }

  private start(slot: Slot, job: Job): void {
    if (job.waitTimer) clearTimeout(job.waitTimer);
    if (slot.idle) clearTimeout(slot.idle);
    slot.idle = null;
    slot.tenant = job.tenant;
    slot.job = job;
    this.ref(slot);
    slot.killer = setTimeout(() => {
      void this.retire(slot, `Python code took longer than ${job.timeoutMs} ms`, 'time');
    }, job.timeoutMs);
    slot.worker.send({ id: job.id, program: job.program, input: job.input });
    // Keep one fresh interpreter loading for the next tenant while there is room.
    if (this.slots.length < this.options.workers && !this.slots.some((s) => s.tenant === null && !s.gone))
      this.spawn();
  }

  private spawn(): void {
    const { script, execArgv, pyodideEntry } = pythonChildCommand();
    const worker = fork(script, [], {
      execArgv,
      env: {},
      serialization: 'json',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    const slot: Slot = {
      worker,
      ready: false,
      tenant: null,
      job: null,
      killer: null,
      idle: null,
      gone: false,
    };
    // Held while it loads (a run waits for it); unreferenced once idle.
    this.slots.push(slot);
    worker.on('message', (reply: Reply) => this.onReply(slot, reply));
    worker.on(
      'error',
      (error) => void this.retire(slot, `the Python sandbox failed: ${error.message}`, 'crash'),
    );
    worker.on('exit', (code, signal) => {
      // Out of JavaScript heap: V8 aborts the process.
      const memory = signal === 'SIGABRT' || code === 134;
      void this.retire(
        slot,
        memory ? 'Python code ran out of memory' : `the Python sandbox stopped (${signal ?? `exit ${code}`})`,
        memory ? 'memory' : 'crash',
      );
    });
    worker.send({
      init: {
        memoryBytes: this.options.memoryMb * 1024 * 1024,
        prelude: this.options.prelude,
        pyodideUrl: pathToFileURL(pyodideEntry).href,
      },
    });
  }

  /** An idle process does not hold the server's event loop open. */
  private unref(slot: Slot): void {
    slot.worker.unref();
    (slot.worker.channel as { unref?: () => void } | undefined)?.unref?.();
  }

  private ref(slot: Slot): void {
    slot.worker.ref();
    (slot.worker.channel as { ref?: () => void } | undefined)?.ref?.();
  }

  private onReply(slot: Slot, reply: Reply): void {
    if ('ready' in reply) {
      slot.ready = true;
      this.startFailures = 0;
      this.release(slot);
      this.dispatch();
      return;
    }
    const job = slot.job;
    if (!job || job.id !== reply.id) return;
    if (slot.killer) clearTimeout(slot.killer);
    slot.killer = null;
    slot.job = null;
    if (reply.ok) job.resolve({ output: reply.output, logs: reply.logs });
    else job.reject(new PythonSandboxError(`the Python interpreter failed: ${reply.error}`, 'crash'));
    if (!reply.ok && reply.broken) void this.retire(slot, 'broken', 'crash');
    else this.release(slot);
    this.dispatch();
  }

  private release(slot: Slot): void {
    this.unref(slot);
    if (slot.idle) clearTimeout(slot.idle);
    slot.idle = setTimeout(() => void this.retire(slot, 'idle', 'crash'), IDLE_MS);
    slot.idle.unref();
  }

  private async retire(slot: Slot, message: string, limit: PythonLimit): Promise<void> {
    if (slot.gone) return;
    slot.gone = true;
    if (slot.killer) clearTimeout(slot.killer);
    if (slot.idle) clearTimeout(slot.idle);
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
    const job = slot.job;
    slot.job = null;
    if (job) job.reject(new PythonSandboxError(message, limit));
    slot.worker.kill('SIGKILL');
    if (!slot.ready && !this.closed && !['replaced', 'idle'].includes(message)) {
      // An interpreter that cannot start will not start the next time either: fail what waits.
      if (++this.startFailures >= 2) {
        for (const waiting of this.waiting.splice(0)) {
          if (waiting.waitTimer) clearTimeout(waiting.waitTimer);
          waiting.reject(new PythonSandboxError(`the Python interpreter did not start: ${message}`, 'crash'));
        }
        this.startFailures = 0;
        return;
      }
    }
    if (!this.closed) this.dispatch();
  }
}
