import type {
  ExecutionOutcome,
  NodeFinished,
  WebhookNodeInfo,
  WebhookResponse,
  WorkflowDefinition,
} from '../engine/index.js';
import type { ExecutionRow } from './store.js';

/** Where a run's trigger came from, as stored with the execution (see runner.ts). */
interface RunTrigger {
  nodeName: string;
  /** The dedupe key the webhook delivery claimed, so its answer is stored for repeats. */
  dedupeKey?: string;
}

/** A run taken off the queue, about to run or resume. */
interface StartedRun {
  row: ExecutionRow;
  def: WorkflowDefinition | null;
  trigger: RunTrigger;
  kind: 'start' | 'resume';
}

/** A respondToWebhook node answered while the run goes on. */
interface RespondedRun {
  row: ExecutionRow;
  trigger: RunTrigger;
  nodeName: string;
  response: WebhookResponse;
  /** The answer as stored (`StoredResponse` JSON). */
  stored: string;
}

/** A node of a run ran (or was cut off, or gave its pinned items): its run as recorded. */
export interface FinishedNode extends NodeFinished {
  row: ExecutionRow;
}

/** A run that ended (or paused at a wait), its outcome serialised for storage. */
export interface FinishedRun {
  row: ExecutionRow;
  def: WorkflowDefinition | null;
  trigger: RunTrigger;
  outcome: ExecutionOutcome;
  /** The webhook node that answers this run, if one does. */
  hook: WebhookNodeInfo | undefined;
  /** The stored answer (`StoredResponse` JSON) of an answering webhook, else null. */
  response: string | null;
  runData: string;
  /**
   * Set by the persistence handler when the store refused the outcome (the run was stopped through
   * the API while it ran): later handlers drop the result instead of delivering it.
   */
  dropped: boolean;
}

export interface LifecycleEvents {
  executionStarted: StartedRun;
  webhookResponded: RespondedRun;
  nodeFinished: FinishedNode;
  executionFinished: FinishedRun;
}

export type LifecycleHandler<E extends keyof LifecycleEvents> = (
  event: LifecycleEvents[E],
) => Promise<void> | void;

/**
 * The runner's lifecycle hooks (n8n's `ExecutionLifecycleHooks`): the runner announces a run's
 * start, an early webhook answer, each node's end (the engine tells it) and the run's end; persistence, webhook answers, error workflows,
 * waiters and the save policy subscribe. Handlers of one event run one after another in the order
 * they were added, so a later one sees what an earlier one decided (`FinishedRun.dropped`).
 */
export class ExecutionLifecycleHooks {
  private readonly handlers: { [E in keyof LifecycleEvents]: LifecycleHandler<E>[] } = {
    executionStarted: [],
    webhookResponded: [],
    nodeFinished: [],
    executionFinished: [],
  };

  addHandler<E extends keyof LifecycleEvents>(event: E, ...handlers: LifecycleHandler<E>[]): this {
    this.handlers[event].push(...handlers);
    return this;
  }

  async run<E extends keyof LifecycleEvents>(event: E, payload: LifecycleEvents[E]): Promise<void> {
    for (const handler of this.handlers[event]) await handler(payload);
  }
}
