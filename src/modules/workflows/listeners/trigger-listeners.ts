import type { Clock } from '../../../core/clock.js';
import { definitionOf } from '../definitions/definitions.js';
import type { WorkflowRow, WorkflowStore } from '../definitions/store.js';
import type { EngineDeps, HostAccess, Item, NodeRegistry } from '../engine/index.js';
import type { ListenerHandle } from '../engine/node-type.js';
import { withDefaults } from '../engine/parameters.js';
import type { Log } from '../executions/log.js';
import type { ExecutionRunner } from '../executions/runner.js';

export interface TriggerListenersDeps {
  workflows: WorkflowStore;
  nodes: NodeRegistry;
  runner: Pick<ExecutionRunner, 'enqueue'>;
  /** What a listener of `accountId` reaches: outbound HTTP and hosts, dedupe history, clock. */
  deps: Omit<EngineDeps, 'credential'>;
  /** What a listener of `accountId` may reach on this host (the Local File Trigger's files folder). */
  hostOf?(accountId: string): HostAccess;
  /** Decrypted credential data for a node of the workflow (the executions' rule). */
  credential(accountId: string, ref: string, workflowId: string): Promise<Record<string, string>>;
  clock: Clock;
  log: Log;
  /** How often every active workflow is looked at (other processes' activations, broken listeners). */
  syncMs: number;
}

interface Running {
  version: number;
  handles: ListenerHandle[];
  /** Set when one of them broke: the next sync starts them all again. */
  broken: boolean;
}

/**
 * The listening triggers (Email Trigger (IMAP), RSS Feed Trigger) of active workflows, in a process
 * with a worker: started at activation, stopped at deactivation, restarted when the workflow is saved
 * again or a listener breaks. Every worker process listens; what they find is recorded in the dedupe
 * history (message UIDs, feed dates) before an execution starts, so one event starts one execution
 * however many processes saw it.
 */
export class TriggerListeners {
  private readonly running = new Map<string, Running>();
  /** One refresh per workflow at a time (a save and a sync may race). */
  private readonly pending = new Map<string, Promise<void>>();
  private stopped = true;

  constructor(private readonly d: TriggerListenersDeps) {}

  /** Whether any node of the workflow listens (cheap: no parameters read). */
  private listeningNodes(row: WorkflowRow) {
    const def = definitionOf(row);
    return def.nodes.filter((n) => !n.disabled && this.d.nodes.get(n.type, n.typeVersion)?.listener);
  }

  /** Brings one workflow's listeners in line with its stored state (after a save, an (de)activation). */
  refresh(accountId: string, workflowId: string): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const before = this.pending.get(workflowId) ?? Promise.resolve();
    const next = before
      .then(() => this.apply(accountId, workflowId))
      .catch((err: unknown) => this.d.log.error({ err, workflowId }, 'trigger listeners not refreshed'))
      .finally(() => {
        if (this.pending.get(workflowId) === next) this.pending.delete(workflowId);
      });
    this.pending.set(workflowId, next);
    return next;
  }

  private async apply(accountId: string, workflowId: string): Promise<void> {
    const row = await this.d.workflows.get(accountId, workflowId);
    const current = this.running.get(workflowId);
    const wanted = row && row.active === 1 && !this.stopped ? this.listeningNodes(row) : [];
    if (current && !current.broken && row && wanted.length > 0 && current.version === row.version) return;
    if (current) {
      this.running.delete(workflowId);
      await this.stopAll(current.handles, workflowId);
    }
    if (!row || wanted.length === 0) return;
    const entry: Running = { version: row.version, handles: [], broken: false };
    this.running.set(workflowId, entry);
    for (const node of wanted) {
      const type = this.d.nodes.get(node.type, node.typeVersion);
      if (!type?.listener) continue;
      try {
        const handle = await type.listener.start({
          node,
          workflowId,
          accountId,
          parameters: withDefaults(type.schema, node.parameters) as Record<string, unknown>,
          deps: {
            ...this.d.deps,
            ...(this.d.hostOf ? { host: this.d.hostOf(accountId) } : {}),
            credential: (ref) => this.d.credential(accountId, ref, workflowId),
          },
          credential: (ref) => this.d.credential(accountId, ref, workflowId),
          emit: (items: Item[]) => this.emit(row, node.name, items),
          failed: (error) => {
            entry.broken = true;
            this.d.log.warn({ err: error, workflowId, node: node.name }, 'trigger listener broke');
          },
          log: this.d.log,
        });
        entry.handles.push(handle);
      } catch (err) {
        entry.broken = true;
        this.d.log.warn({ err, workflowId, node: node.name }, 'trigger listener not started');
      }
    }
  }

  private async emit(row: WorkflowRow, nodeName: string, items: Item[]): Promise<void> {
    if (items.length === 0 || this.running.get(row.id)?.version !== row.version) return;
    await this.d.runner.enqueue({
      accountId: row.account_id,
      workflowId: row.id,
      version: row.version,
      mode: 'trigger',
      trigger: { nodeName, items },
    });
  }

  private async stopAll(handles: ListenerHandle[], workflowId: string): Promise<void> {
    for (const h of handles)
      await h
        .stop()
        .catch((err: unknown) => this.d.log.warn({ err, workflowId }, 'trigger listener stop failed'));
  }

  /** Looks at every workflow: starts what should listen, stops what should not, restarts what broke. */
  async sync(): Promise<void> {
    const rows = await this.d.workflows.all(null);
    const seen = new Set<string>();
    for (const row of rows) {
      seen.add(row.id);
      const current = this.running.get(row.id);
      const listens = row.active === 1 && this.listeningNodes(row).length > 0;
      if (listens || current) await this.refresh(row.account_id, row.id);
    }
    for (const [id, current] of this.running)
      if (!seen.has(id)) {
        this.running.delete(id);
        await this.stopAll(current.handles, id);
      }
  }

  /** Syncs now and every `syncMs` until the returned function stops every listener. */
  start(): () => Promise<void> {
    this.stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void> = Promise.resolve();
    const loop = () => {
      running = this.sync()
        .catch((err: unknown) => this.d.log.error({ err }, 'trigger listeners sync failed'))
        .finally(() => {
          if (this.stopped) return;
          timer = setTimeout(loop, this.d.syncMs);
          timer.unref();
        });
    };
    loop();
    return async () => {
      this.stopped = true;
      clearTimeout(timer);
      await running;
      await Promise.all([...this.pending.values()]);
      for (const [id, current] of [...this.running]) {
        this.running.delete(id);
        await this.stopAll(current.handles, id);
      }
    };
  }
}
