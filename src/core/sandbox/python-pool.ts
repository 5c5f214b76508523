import { type ChildProcess, spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { TenantTurns } from '../fairness/tenant-turns.js';
import { residentMb } from './process-memory.js';
import { pythonChildCommand } from './python-child-command.js';
import { type LogLine, type Reply, readReply } from './python-protocol.js';

export { pythonChildCommand } from './python-child-command.js';

/**
 * Runs Python (CPython 3 on WebAssembly, Pyodide) in child processes (python-child.mjs), each under Node's
 * permission model (it may read only its own file and Pyodide's, spawn nothing, start no worker), with an
 * empty environment and, where the OS allows it, in a network namespace of its own: a small pool of warm
 * interpreters, started on first use (loading one takes seconds), each running one program at a time.
 *
 * Bounds: a run that passes its deadline has its process killed (and replaced); the WebAssembly memory
 * of an interpreter is capped (`memoryMb`: Python raises MemoryError) and its JavaScript heap by
 * --max-old-space-size. Python can reach Pyodide's JavaScript objects (docs/security.md) and so allocate
 * outside both (ArrayBuffers), so the process is bounded too, by the OS where it can: on Linux the pool
 * reads each child's resident memory (/proc) every 50 ms while it runs (every second otherwise) and at
 * each answer, and kills it past `memoryMb + RESIDENT_OVERHEAD_MB` (the run fails with limit `memory`,
 * the interpreter is replaced); and where util-linux's prlimit is on the PATH, the child runs under
 * RLIMIT_DATA (python-child-command.ts), so an allocation past that fails outright, between two reads.
 * Elsewhere (macOS, Windows) only the JavaScript caps hold (docs/security.md). Waiting runs are bounded in number (in all and per tenant) and in time; what the
 * child sends is checked (python-protocol.ts). A run that leaves work scheduled in its interpreter (an
 * asyncio task, a callback) has that interpreter ended and replaced once it has answered.
 *
 * Isolation: every run gets a fresh globals dict, and the modules it imported are dropped after it. An
 * interpreter, once used, serves one tenant (an account) only: another tenant gets a fresh interpreter,
 * one idle interpreter of another tenant being ended for it when the pool is full. So no Python state
 * (a module attribute, a monkey-patched builtin) crosses accounts.
 *
 * Fairness: waiting runs queue per tenant and tenants take turns (TenantTurns, as the expression sandbox
 * and the execution queue do). A tenant holds at most all interpreters but one. When an interpreter frees
 * and a tenant ahead in turn has none, that interpreter is handed over (ended, a fresh one started for
 * the waiting tenant) once its tenant has held it for `turnMs`: so busy tenants cannot starve another,
 * and a handover (seconds of loading) is paid at most once per turn.
 */

export interface PythonPoolOptions {
  /** Most interpreters alive at once. */
  workers: number;
  /** Cap of one interpreter's WebAssembly memory, in MiB. */
  memoryMb: number;
  /** Resident memory a process may hold beyond `memoryMb` before it is killed, in MiB; default RESIDENT_OVERHEAD_MB. */
  residentOverheadMb?: number;
  /** Python source run before each program, in its globals. */
  prelude: string;
  /** Longest a run may wait for an interpreter (loading included); default 120 s. */
  maxWaitMs?: number;
  /** Runs waiting in all; past it, the tenant waiting with the most gives up its newest. Default 100. */
  maxQueue?: number;
  /** Runs one tenant may have waiting; default 20. */
  maxQueuePerTenant?: number;
  /** How long a tenant keeps an interpreter, once it has one, before handing it to a tenant waiting for none; default 5 s. */
  turnMs?: number;
  /** Largest answer (`__output__`) in characters; default 5,000,000. */
  maxOutputChars?: number;
  /** How long after answering a child may take to report what its run left scheduled; default 5 s. */
  settleMs?: number;
  /** Told once when the children cannot be started without a network (they run with the JavaScript block only). */
  onWarning?: (message: string) => void;
}

export type PythonLimit = 'time' | 'memory' | 'queue' | 'output' | 'crash';

export class PythonSandboxError extends Error {
  constructor(
    message: string,
    readonly limit: PythonLimit,
    /** What the run printed before it failed, when it answered. */
    readonly logs: LogLine[] = [],
  ) {
    super(message);
    this.name = 'PythonSandboxError';
  }
}

export interface PythonRun {
  /** What the program left in `__output__` (null if nothing). */
  output: string | null;
  logs: LogLine[];
  /** Work the run left scheduled (its interpreter was replaced for it); empty normally. */
  leftPending: string[];
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
  /** Since when it serves that tenant (a turn's length counts from here). */
  since: number;
  job: Job | null;
  /** The run answered; the child has not yet said what it left scheduled. */
  settling: number | null;
  /** The run's deadline, then the settle deadline. */
  killer: NodeJS.Timeout | null;
  idle: NodeJS.Timeout | null;
  /** The next read of the process's resident memory. */
  watch: NodeJS.Timeout | null;
  gone: boolean;
}

const IDLE_MS = 5 * 60_000;
/**
 * Resident memory a child may hold beyond its WebAssembly cap, in MiB. Measured: a loaded interpreter
 * holds ~150-170 MiB (its initial WebAssembly memory included), and its JavaScript heap grows a little
 * as it runs; past this, something allocates outside the caps.
 */
export const RESIDENT_OVERHEAD_MB = 192;
/** How often a child's resident memory is read while it runs (a fill of 200 MiB takes longer) and otherwise. */
const WATCH_BUSY_MS = 50;
const WATCH_IDLE_MS = 1_000;
const DEFAULT_OUTPUT_CHARS = 5_000_000;

export class PythonPool {
  private readonly slots: Slot[] = [];
  private readonly waiting = new TenantTurns<Job>();
  private nextId = 1;
  private closed = false;
  /** Interpreters that failed to start in a row: past two, waiting runs fail instead of respawning. */
  private startFailures = 0;
  /** dispatch() is running; a call meanwhile (a retirement it caused) asks for another pass instead. */
  private dispatching = false;
  private dispatchAgain = false;
  private warned = false;

  constructor(private readonly options: PythonPoolOptions) {}

  /** Runs `program` (after the prelude) with `__input__ = input`, for `tenant`, within `timeoutMs`. */
  run(program: string, input: string, timeoutMs: number, tenant = 'default'): Promise<PythonRun> {
    if (this.closed) return Promise.reject(new PythonSandboxError('the Python sandbox is closed', 'crash'));
    const { admitted, evicted } = this.waiting.admit(
      tenant,
      this.options.maxQueue ?? 100,
      this.options.maxQueuePerTenant ?? 20,
    );
    if (evicted) this.refuse(evicted, 'the Python sandbox is busy; try again');
    if (!admitted)
      return Promise.reject(
        new PythonSandboxError(
          this.waiting.waitingFor(tenant) >= (this.options.maxQueuePerTenant ?? 20)
            ? "this account's Python runs already fill its queue; try again"
            : 'the Python sandbox is busy; try again',
          'queue',
        ),
      );
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
        if (this.waiting.remove(tenant, job))
          reject(new PythonSandboxError('no Python interpreter became free in time; try again', 'queue'));
      }, this.options.maxWaitMs ?? 120_000);
      job.waitTimer.unref();
      this.waiting.push(tenant, job);
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

  /** Runs waiting for an interpreter (for tests). */
  get queued(): number {
    return this.waiting.waiting;
  }

  /** Process ids of the interpreters alive (for tests: one replaced has another pid). */
  get pids(): number[] {
    return this.slots.map((s) => s.worker.pid ?? 0);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.drain()) this.refuse(job, 'the Python sandbox is closed', 'crash');
    await Promise.all(
      this.slots.slice().map((slot) => this.retire(slot, 'the Python sandbox is closed', 'crash')),
    );
  }

  private refuse(job: Job, message: string, limit: PythonLimit = 'queue'): void {
    if (job.waitTimer) clearTimeout(job.waitTimer);
    job.reject(new PythonSandboxError(message, limit));
  }

  private held(tenant: string): number {
    return this.slots.filter((s) => s.tenant === tenant && !s.gone).length;
  }

  private idleSlots(): Slot[] {
    return this.slots.filter((s) => s.ready && !s.job && s.settling === null && !s.gone);
  }

  /**
   * Serves waiting runs, tenants in turn. A tenant with an idle interpreter of its own runs on it; one
   * without (and below its share: all interpreters but one) takes a fresh one, or claims one loading,
   * or has one started, or, the pool full, has one idle interpreter of another tenant ended for a fresh
   * one: of a tenant with nothing waiting, else of one that has held it for its turn (`turnMs`). Each
   * start changes the turns, so the pass starts again until nothing more can start.
   */
  private dispatch(): void {
    if (this.closed) return;
    if (this.dispatching) {
      this.dispatchAgain = true;
      return;
    }
    this.dispatching = true;
    try {
      do {
        this.dispatchAgain = false;
        while (this.pass()) {}
      } while (this.dispatchAgain && !this.closed);
    } finally {
      this.dispatching = false;
    }
  }

  /** One pass over the tenants in turn; true when a run started (the turns changed). */
  private pass(): boolean {
    const cap = Math.max(1, this.options.workers - 1);
    const turnMs = this.options.turnMs ?? 5_000;
    let loading = this.slots.filter((s) => !s.ready && !s.gone).length;
    const tenants = this.waiting.tenants();
    for (const tenant of tenants) {
      const idle = this.idleSlots();
      const held = this.held(tenant);
      const slot =
        idle.find((s) => s.tenant === tenant) ??
        (held < cap ? idle.find((s) => s.tenant === null) : undefined);
      if (slot) {
        const next = this.waiting.take((t) => t !== tenant);
        if (next) this.start(slot, next.item);
        return true;
      }
      if (held >= cap) continue;
      // This tenant may use a fresh interpreter: one loading, or one started now…
      if (loading > 0) {
        loading--;
        continue;
      }
      if (this.slots.length < this.options.workers) {
        this.spawn();
        continue;
      }
      // …or, the pool full and it holding none, one in place of another tenant's idle interpreter.
      if (held > 0) continue;
      const now = Date.now();
      const victim =
        idle.find((s) => s.tenant !== null && this.waiting.waitingFor(s.tenant) === 0) ??
        idle.find((s) => s.tenant !== null && now - s.since >= turnMs);
      if (victim) {
        // Started first, so that the next pass counts it as loading (for this tenant).
        this.spawn();
        void this.retire(victim, 'replaced', 'crash');
      }
    }
    return false;
  }

  private start(slot: Slot, job: Job): void {
    if (job.waitTimer) clearTimeout(job.waitTimer);
    if (slot.idle) clearTimeout(slot.idle);
    slot.idle = null;
    if (slot.tenant !== job.tenant) slot.since = Date.now();
    slot.tenant = job.tenant;
    slot.job = job;
    this.ref(slot);
    slot.killer = setTimeout(() => {
      void this.retire(slot, `Python code took longer than ${job.timeoutMs} ms`, 'time');
    }, job.timeoutMs);
    slot.worker.send({ id: job.id, program: job.program, input: job.input });
    this.watch(slot);
    // Keep one fresh interpreter loading for the next tenant while there is room.
    if (this.slots.length < this.options.workers && !this.slots.some((s) => s.tenant === null && !s.gone))
      this.spawn();
  }

  private spawn(): void {
    const { command, args, pyodideEntry, network } = pythonChildCommand(this.options.memoryMb);
    if (!network.available && !this.warned) {
      this.warned = true;
      this.options.onWarning?.(
        `Python interpreters run without an OS network namespace (${network.reason}); their network is cut by JavaScript only`,
      );
    }
    const worker = spawn(command, args, {
      env: {},
      serialization: 'json',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    const slot: Slot = {
      worker,
      ready: false,
      tenant: null,
      since: 0,
      job: null,
      settling: null,
      killer: null,
      idle: null,
      watch: null,
      gone: false,
    };
    // Held while it loads (a run waits for it); unreferenced once idle.
    this.slots.push(slot);
    worker.on('message', (message: unknown) => this.onMessage(slot, message));
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
    this.watch(slot);
    worker.send({
      init: {
        memoryBytes: this.options.memoryMb * 1024 * 1024,
        maxOutputChars: this.maxOutputChars,
        prelude: this.options.prelude,
        pyodideUrl: pathToFileURL(pyodideEntry).href,
      },
    });
  }

  private get maxOutputChars(): number {
    return this.options.maxOutputChars ?? DEFAULT_OUTPUT_CHARS;
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

  private onMessage(slot: Slot, message: unknown): void {
    if (slot.gone) return;
    const reply = readReply(message, this.maxOutputChars);
    if (!reply) {
      void this.retire(slot, 'the Python interpreter sent a malformed message', 'crash');
      return;
    }
    this.onReply(slot, reply);
  }

  private onReply(slot: Slot, reply: Reply): void {
    if (reply.kind === 'ready') {
      slot.ready = true;
      this.startFailures = 0;
      this.release(slot);
      this.dispatch();
      return;
    }
    if (reply.kind === 'settled') {
      if (slot.settling !== reply.id) return;
      if (slot.killer) clearTimeout(slot.killer);
      slot.killer = null;
      slot.settling = null;
      if (reply.pending.length > 0) void this.retire(slot, 'recycled', 'crash');
      else {
        this.release(slot);
        this.dispatch();
      }
      return;
    }
    const job = slot.job;
    if (!job || job.id !== reply.id) return;
    // Read at the answer too: a run that allocated past the bound between two reads fails all the same.
    if (this.overMemory(slot)) return;
    if (slot.killer) clearTimeout(slot.killer);
    slot.killer = null;
    slot.job = null;
    if (reply.ok) job.resolve({ output: reply.output, logs: reply.logs, leftPending: reply.pending });
    else
      job.reject(
        reply.oversize
          ? new PythonSandboxError(reply.error, 'output', reply.logs)
          : new PythonSandboxError(`the Python interpreter failed: ${reply.error}`, 'crash', reply.logs),
      );
    if ((!reply.ok && reply.broken) || (reply.ok && reply.pending.length > 0)) {
      // Left something running (or broken): ended now rather than kept up to its retirement.
      void this.retire(slot, reply.ok ? 'recycled' : 'broken', 'crash');
      return;
    }
    // Free again once the child says its run left nothing scheduled (after the run's microtasks).
    // (Still referenced meanwhile: a run waiting for this interpreter keeps the process alive.)
    slot.settling = reply.id;
    slot.killer = setTimeout(
      () => void this.retire(slot, 'the interpreter stayed busy after answering', 'crash'),
      this.options.settleMs ?? 5_000,
    );
    slot.killer.unref();
  }

  /** Reads the child's resident memory now and then (faster while it runs), while it can be read. */
  private watch(slot: Slot): void {
    if (slot.watch) clearTimeout(slot.watch);
    slot.watch = setTimeout(
      () => {
        slot.watch = null;
        const used = residentMb(slot.worker.pid);
        // Unreadable: not Linux (the gap docs/security.md names), or the process is gone.
        if (!slot.gone && used !== null && !this.overMemory(slot, used)) this.watch(slot);
      },
      slot.job || slot.settling !== null ? WATCH_BUSY_MS : WATCH_IDLE_MS,
    );
    slot.watch.unref();
  }

  /** Ends the interpreter (failing its run) when its resident memory is past the bound; true if so. */
  private overMemory(slot: Slot, used = residentMb(slot.worker.pid)): boolean {
    const limit = this.options.memoryMb + (this.options.residentOverheadMb ?? RESIDENT_OVERHEAD_MB);
    if (used === null || used <= limit) return false;
    void this.retire(
      slot,
      `Python code used more memory than its interpreter may hold (${Math.round(used)} MiB resident, limit ${limit} MiB); the interpreter was ended`,
      'memory',
    );
    return true;
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
    if (slot.watch) clearTimeout(slot.watch);
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
    const job = slot.job;
    slot.job = null;
    if (job) job.reject(new PythonSandboxError(message, limit));
    slot.worker.kill('SIGKILL');
    if (!slot.ready && !this.closed && !['replaced', 'idle'].includes(message)) {
      // An interpreter that cannot start will not start the next time either: fail what waits.
      if (++this.startFailures >= 2) {
        for (const waiting of this.waiting.drain())
          this.refuse(waiting, `the Python interpreter did not start: ${message}`, 'crash');
        this.startFailures = 0;
        return;
      }
    }
    if (!this.closed) this.dispatch();
  }
}
