import { type Clock, isoNow } from '../../../core/clock.js';
import { newId } from '../../../core/ids.js';
import type { JobPayload, JobQueue, jobs } from '../../../core/queue/index.js';
import { webhookNodesOf } from '../definitions/definitions.js';
import type { WorkflowStore } from '../definitions/store.js';
import {
  type ExecutionOutcome,
  type Item,
  type NodeFinished,
  type RunContext,
  type RunState,
  resumeUrlOf,
  type WebhookNodeInfo,
  type WebhookResponse,
  type WorkflowDefinition,
  type WorkflowEngine,
} from '../engine/index.js';
import type { DeliveryStore } from '../webhooks/delivery-store.js';
import { finishedResponse } from '../webhooks/response.js';
import { ExecutionLifecycleHooks } from './lifecycle-hooks.js';
import type { Log } from './log.js';
import type { ExecutionQuota } from './quota.js';
import type { ResumeSigner } from './resume-signature.js';
import { keepsExecution } from './save-policy.js';
import { type ExecutionRow, type ExecutionStore, QUEUE_OUTAGE_MESSAGE } from './store.js';
import type { ExecutionWaiters } from './waiters.js';

/** Declared in the job catalogue (core/queue/jobs.ts), with its schema, timeout and attempts. */
export type ExecutionJob = JobPayload<typeof jobs.workflowExecution>;

export interface TriggerData {
  nodeName: string;
  items: Item[];
  /** The dedupe key this delivery claimed, so its answer is stored for repeats. */
  dedupeKey?: string;
  /** A manual run's pinned data by node name (kept with the trigger so any worker honours it). */
  pinData?: Record<string, Item[]>;
  /** A sub-workflow's nesting (1: called by a top-level run) and its caller. */
  depth?: number;
  parentExecutionId?: string;
  /** A waited sub-workflow: its caller's node runs so far (one bound for the call tree). */
  nodeRunsBefore?: number;
  /**
   * A sub-workflow given as JSON in its caller's node (n8n's `source: 'parameter'`), validated before
   * it was stored here: the execution runs it instead of its workflow's own definition.
   */
  definition?: WorkflowDefinition;
}

export interface NewExecution {
  accountId: string;
  workflowId: string;
  version: number;
  mode: RunContext['mode'];
  trigger: TriggerData;
  retryOf?: string | null;
  id?: string;
}

export interface RunnerDeps {
  executions: ExecutionStore;
  workflows: WorkflowStore;
  deliveries: DeliveryStore;
  /** The engine of one account: it reads only that account's credentials. */
  engineFor(accountId: string): WorkflowEngine;
  queue: JobQueue<ExecutionJob>;
  waiters: ExecutionWaiters;
  clock: Clock;
  log: Log;
  resumeUrlBase: string;
  signer: ResumeSigner;
  /** The daily execution quota every new execution is counted against (absent: none). */
  quota?: ExecutionQuota;
}

/** The queue's group of an execution job: its account. */
export const accountOfJob = (job: ExecutionJob): string => job.accountId ?? '';

const DEFINITION_CACHE_MAX = 500;

/** Modes whose trigger webhook answers: a webhook call, or a flow, an agent or an MCP client waiting for the output. */
const ANSWERED_MODES: ReadonlySet<string> = new Set(['webhook', 'test', 'flow', 'agent', 'mcp']);

/**
 * The webhook node that answers an execution, if any. A flow or an agent always waits for the
 * output, so for them an `onReceived` webhook answers like `lastNode`.
 */
function answeringHook(
  def: WorkflowDefinition | null,
  mode: string,
  nodeName: string,
): WebhookNodeInfo | undefined {
  if (!def || !ANSWERED_MODES.has(mode)) return undefined;
  const hook = webhookNodesOf(def).find((h) => h.nodeName === nodeName);
  if (!hook || mode === 'webhook' || hook.responseMode !== 'onReceived') return hook;
  return { ...hook, responseMode: 'lastNode' };
}

/** The outcome of a run that ended in a failure outside any node. */
function failedOutcome(message: string): ExecutionOutcome {
  return {
    status: 'error',
    state: { runData: {}, lastNodeExecuted: null, error: { message }, pending: [] },
    waitTill: null,
    lastItems: [],
    webhookResponse: null,
  };
}

/** An execution's trigger; only webhook calls are deduplicated, so another mode's key is ignored. */
function triggerOf(row: ExecutionRow): TriggerData {
  const trigger = JSON.parse(row.trigger_data) as TriggerData;
  if (row.mode === 'webhook' || trigger.dedupeKey === undefined) return trigger;
  const { dedupeKey: _ignored, ...rest } = trigger;
  return rest;
}

/**
 * Creates executions and runs them off the queue: claim, run or resume with the engine, store the
 * outcome and the webhook answer, tell whoever waits. Pure of HTTP.
 */
export class ExecutionRunner {
  /** Executions run by `runInline`: their caller reads them before any deletion. */
  private readonly inline = new Set<string>();
  /** Executions running in this process, and those of them stopped through the API meanwhile. */
  private readonly running = new Map<string, AbortController>();
  private readonly definitions = new Map<string, WorkflowDefinition>();
  /**
   * What happens around a run: persistence, webhook answers, error workflows, waiters and the save
   * policy subscribe here (lifecycle-subscribers.ts); the runner only announces.
   */
  readonly hooks = new ExecutionLifecycleHooks();

  constructor(private readonly deps: RunnerDeps) {
    deps.waiters.listenStops((id) => {
      this.running.get(id)?.abort();
    });
  }

  /**
   * Stores a new execution (status `new`) and queues it; after this resolves it will run. Throws
   * the 429 of a spent daily execution quota before anything is stored.
   */
  async enqueue(input: NewExecution): Promise<string> {
    const id = await this.insert(input);
    try {
      await this.deps.queue.add(id, { executionId: id, kind: 'start', accountId: input.accountId });
    } catch (error) {
      if (!(await this.takenAnyway(id))) throw error;
    }
    return id;
  }

  /**
   * After a failed add (Redis unreachable): the job may still reach Redis (sent before it stopped
   * answering). The execution is canceled unless a worker took it already, so it never runs after
   * its caller was told it failed, nor stays `new`; true when a worker took it (it runs).
   */
  private async takenAnyway(id: string): Promise<boolean> {
    try {
      const at = isoNow(this.deps.clock);
      if (await this.deps.executions.cancelUnstarted(id, at, QUEUE_OUTAGE_MESSAGE)) return false;
      const row = await this.deps.executions.get(id);
      return row !== undefined && row.status !== 'canceled';
    } catch {
      // The database does not answer either: nothing is known to run.
      return false;
    }
  }

  /**
   * Runs a new execution here and now, in the caller's turn (a sub-workflow its caller waits for),
   * and returns its row as it ended. A later pause of it resumes through the queue as usual.
   */
  async runInline(input: NewExecution): Promise<ExecutionRow | undefined> {
    const id = await this.insert(input);
    this.inline.add(id);
    try {
      await this.handle({ executionId: id, kind: 'start' });
      const row = await this.deps.executions.get(id);
      // Read by the caller first, then gone if the callee's save settings say so.
      if (
        row &&
        !keepsExecution(await this.definition(row.workflow_id, row.workflow_version), row.mode, row.status)
      )
        await this.deps.executions.delete(row.account_id, row.id);
      return row;
    } finally {
      this.inline.delete(id);
    }
  }

  /** Every new execution passes here (queued or inline): the one place the quota counts. */
  private async insert(input: NewExecution): Promise<string> {
    await this.deps.quota?.admit(input.accountId, input.mode);
    const id = input.id ?? newId('exe');
    const row: ExecutionRow = {
      id,
      account_id: input.accountId,
      workflow_id: input.workflowId,
      workflow_version: input.version,
      mode: input.mode,
      status: 'new',
      finished: 0,
      retry_of: input.retryOf ?? null,
      trigger_data: JSON.stringify(input.trigger),
      run_data: null,
      error_message: null,
      response: null,
      wait_till: null,
      started_at: isoNow(this.deps.clock),
      stopped_at: null,
    };
    await this.deps.executions.insert(row);
    return id;
  }

  async definition(workflowId: string, version: number): Promise<WorkflowDefinition | null> {
    const key = `${workflowId}@${version}`;
    const cached = this.definitions.get(key);
    if (cached) return cached;
    const def = await this.deps.workflows.version(workflowId, version);
    if (!def) return null;
    if (this.definitions.size >= DEFINITION_CACHE_MAX) {
      this.definitions.delete(this.definitions.keys().next().value as string);
    }
    this.definitions.set(key, def);
    return def;
  }

  /** The signed URL that resumes an execution at its `waitIndex`-th pause (for its author only). */
  resumeUrl(executionId: string, waitIndex: number): string {
    return resumeUrlOf(this.deps.resumeUrlBase, executionId, this.deps.signer.sign(executionId, waitIndex));
  }

  /**
   * An execution was stopped: the process running it starts no further node of it (over Redis when
   * that is another process), and whoever waits for its answer is told now.
   */
  async stopped(executionId: string): Promise<void> {
    await this.deps.waiters.stop(executionId);
    await this.deps.waiters.notify(executionId, null);
  }

  /** Whether an execution runs inline (`runInline`): its caller reads it before any deletion. */
  runsInline(executionId: string): boolean {
    return this.inline.has(executionId);
  }

  /** The queue's job handler. */
  async handle(job: ExecutionJob): Promise<void> {
    const { executions } = this.deps;
    const from = job.kind === 'start' ? 'new' : 'waiting';
    const row = await executions.claim(job.executionId, from);
    if (!row) {
      const seen = await executions.get(job.executionId);
      // A start job seen again while its row says running: its worker died mid-run (BullMQ handed
      // the stalled job on). Running it twice could repeat side effects: it goes on from its
      // checkpoint if it has one (the due-waits poll resumes it), else it is recorded crashed. (A
      // resume job seen twice may be a duplicate of a live run, so it is left alone.)
      if (seen && job.kind === 'start' && seen.status === 'running' && !this.running.has(seen.id)) {
        const marked = await executions.markCrashed([seen.id], isoNow(this.deps.clock));
        if (marked.crashed > 0) {
          await this.releaseCrashed(seen);
          await this.deps.waiters.notify(seen.id, null);
        }
      }
      return;
    }
    const trigger = triggerOf(row);
    const def = trigger.definition ?? (await this.definition(row.workflow_id, row.workflow_version));
    let outcome: ExecutionOutcome;
    try {
      if (!def) throw new Error(`Workflow ${row.workflow_id} version ${row.workflow_version} is gone`);
      const hook = answeringHook(def, row.mode, trigger.nodeName);
      const stop = new AbortController();
      const ctx: RunContext = {
        executionId: row.id,
        mode: row.mode as RunContext['mode'],
        resumeUrlBase: this.deps.resumeUrlBase,
        resumeSignature: (waitIndex) => this.deps.signer.sign(row.id, waitIndex),
        ...(row.mode === 'manual' && trigger.pinData ? { pinData: trigger.pinData } : {}),
        ...deadlineOf(def),
        stopSignal: stop.signal,
        ...(trigger.nodeRunsBefore ? { nodeRunsBefore: trigger.nodeRunsBefore } : {}),
        ...(hook?.responseMode === 'responseNode'
          ? { onRespond: (r: WebhookResponse) => this.answerEarly(row, hook.nodeName, trigger, r) }
          : {}),
        onNodeFinished: (node) => this.nodeFinished(row, node),
        ...(hook?.streaming && (row.mode === 'webhook' || row.mode === 'test')
          ? { onChunk: (chunk) => this.deps.waiters.chunk(row.id, JSON.stringify(chunk)) }
          : {}),
      };
      // A waited sub-workflow has none: its caller's checkpoint covers the call, and a resumed caller
      // calls again.
      if (!this.inline.has(row.id)) {
        ctx.checkpoint = (state, resumeAt) =>
          executions.checkpoint(row.id, JSON.stringify(state), resumeAt.toISOString());
        ctx.clearCheckpoint = () => executions.clearCheckpoint(row.id);
      }
      const engine = this.deps.engineFor(row.account_id);
      await this.hooks.run('executionStarted', { row, def, trigger, kind: job.kind });
      this.running.set(row.id, stop);
      outcome = await (job.kind === 'start'
        ? engine.run(def, { nodeName: trigger.nodeName, items: trigger.items }, ctx)
        : engine.resume(def, JSON.parse(row.run_data ?? 'null') as RunState, job.resumeItems ?? null, ctx));
    } catch (error) {
      this.deps.log.error({ err: error, executionId: row.id }, 'execution failed to run');
      outcome = failedOutcome(error instanceof Error ? error.message : String(error));
    }
    this.running.delete(row.id);
    await this.finish(row, def, trigger, outcome);
  }

  /**
   * A crashed webhook run's dedupe claim is freed, as a failed run's is: its caller was answered
   * 502 and a retry with the same key runs (the crashed run stays recorded for the operator).
   */
  private async releaseCrashed(row: ExecutionRow): Promise<void> {
    const trigger = triggerOf(row);
    if (row.mode !== 'webhook' || !trigger.dedupeKey) return;
    await this.deps.deliveries.release(row.workflow_id, trigger.nodeName, trigger.dedupeKey, row.id);
  }

  /** A respondToWebhook ran: its answer is stored and delivered now (the hooks' subscribers); the run goes on. */
  private async answerEarly(
    row: ExecutionRow,
    nodeName: string,
    trigger: TriggerData,
    response: WebhookResponse,
  ): Promise<void> {
    const stored = JSON.stringify({ kind: 'reply', ...response });
    await this.hooks.run('webhookResponded', { row, trigger, nodeName, response, stored });
  }

  /**
   * A node ran: the hooks' subscribers hear of it. Their bookkeeping must not decide the run, so a
   * subscriber that throws is logged and the run goes on.
   */
  private async nodeFinished(row: ExecutionRow, node: NodeFinished): Promise<void> {
    try {
      await this.hooks.run('nodeFinished', { row, ...node });
    } catch (error) {
      this.deps.log.error(
        { err: error, executionId: row.id, node: node.nodeName },
        'nodeFinished handler failed',
      );
    }
  }

  /** The run ended (or paused): its outcome, serialised once, goes to the hooks' subscribers. */
  private async finish(
    row: ExecutionRow,
    def: WorkflowDefinition | null,
    trigger: TriggerData,
    outcome: ExecutionOutcome,
  ): Promise<void> {
    const hook = answeringHook(def, row.mode, trigger.nodeName);
    const answers = hook && hook.responseMode !== 'onReceived';
    const serialize = (o: ExecutionOutcome) => ({
      response: def && hook && answers ? JSON.stringify(finishedResponse(def, hook, o, row.id)) : null,
      runData: JSON.stringify(o.state),
    });
    let stored: { response: string | null; runData: string };
    try {
      stored = serialize(outcome);
    } catch (error) {
      // Data no JSON can hold (nested thousands deep, built by an expression): the run fails
      // rather than staying `running` for ever.
      this.deps.log.error({ err: error, executionId: row.id }, 'execution data cannot be stored');
      const reason = error instanceof Error ? error.message : String(error);
      outcome = failedOutcome(`The execution's data cannot be stored: ${reason}`);
      stored = serialize(outcome);
    }
    await this.hooks.run('executionFinished', {
      row,
      def,
      trigger,
      outcome,
      hook,
      response: stored.response,
      runData: stored.runData,
      dropped: false,
    });
  }
}

/** The workflow's `settings.executionTimeout` (seconds; -1 or absent: none) from now on. */
function deadlineOf(def: WorkflowDefinition): Pick<RunContext, 'deadline'> {
  const seconds = def.settings?.executionTimeout;
  if (typeof seconds !== 'number' || seconds <= 0) return {};
  return { deadline: { at: Date.now() + seconds * 1000, seconds } };
}
