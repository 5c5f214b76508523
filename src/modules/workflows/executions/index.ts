import path from 'node:path';
import type { Redis } from 'ioredis';
import type { Config } from '../../../config.js';
import type { Clock } from '../../../core/clock.js';
import type { Db } from '../../../core/db/database.js';
import type { AddressGuard, OutboundHttp } from '../../../core/http/outbound.js';
import type { OutboundHostGuard } from '../../../core/http/outbound-host.js';
import { createQueue, type JobQueue, jobs } from '../../../core/queue/index.js';
import type { JobEvents } from '../../../core/queue/job-events.js';
import { callerChecks } from '../credentials/access.js';
import type { OAuth2Tokens } from '../credentials/oauth2/access-tokens.js';
import type { CredentialService } from '../credentials/service.js';
import type { CredentialStore } from '../credentials/store.js';
import type { WorkflowStore } from '../definitions/store.js';
import {
  type EngineDeps,
  type HostAccess,
  type NodeRegistry,
  type PlatformAiAccess,
  WorkflowEngine,
} from '../engine/index.js';
import { VariablesEngine } from '../variables/engine.js';
import type { VariableService } from '../variables/service.js';
import type { DeliveryStore } from '../webhooks/delivery-store.js';
import { DbExecutionCountStore, RedisExecutionCountStore } from './count-store.js';
import type { DedupeStore } from './dedupe-store.js';
import { DirectRunner } from './direct-run.js';
import { inlineWorkflowDefinition } from './inline-workflow.js';
import { subscribeAll } from './lifecycle-subscribers.js';
import type { Log } from './log.js';
import { InterruptedJobs, Maintenance } from './maintenance.js';
import { ManualRunner } from './manual-run.js';
import { ExecutionQuota } from './quota.js';
import type { ResumeSigner } from './resume-signature.js';
import { ExecutionResumer } from './resumer.js';
import { accountOfJob, type ExecutionJob, ExecutionRunner } from './runner.js';
import { ExecutionService } from './service.js';
import type { ExecutionStore } from './store.js';
import { SubWorkflowRunner } from './sub-workflow.js';
import { ExecutionWaiters } from './waiters.js';

/** The settings the executions room reads (parsed once, at boot). */
type ExecutionLimits = Pick<
  Config,
  | 'PUBLIC_URL'
  | 'REDIS_URL'
  | 'REDIS_PREFIX'
  | 'QUEUE_PREFIX'
  | 'QUEUE_STALL_SECONDS'
  | 'REDIS_COMMAND_TIMEOUT_MS'
  | 'WORKFLOW_ACCOUNT_CONCURRENCY'
  | 'WORKFLOW_CONCURRENCY'
  | 'WORKFLOW_DAILY_EXECUTIONS'
  | 'WORKFLOW_DAILY_EXECUTION_OVERRIDES'
  | 'WORKFLOW_MAX_CALL_DEPTH'
  | 'WORKFLOW_MAX_WAIT_SECONDS'
  | 'WORKFLOW_MAX_NODE_RUNS'
  | 'EXPRESSION_TIMEOUT_MS'
  | 'CODE_NODE_TIMEOUT_MS'
  | 'EXECUTIONS_MAX_AGE_DAYS'
  | 'EXECUTIONS_MAX_COUNT'
  | 'EXECUTIONS_PRUNE_INTERVAL_SECONDS'
  | 'WEBHOOK_DEDUPE_HOURS'
  | 'MANUAL_RUN_WAIT_MS'
  | 'WORKFLOW_FILES_DIR'
  | 'WORKFLOW_EXECUTE_COMMAND_ENABLED'
  | 'EXECUTE_COMMAND_TIMEOUT_MS'
  | 'EXECUTE_COMMAND_MAX_OUTPUT_BYTES'
  | 'S3_MAX_DOWNLOAD_BYTES'
  | 'WORKFLOW_SSH_ENABLED'
  | 'WORKFLOW_PYTHON_ENABLED'
>;

/**
 * Everything the executions room needs, passed once (trigger.dev's run-engine `SystemResources`):
 * each part below is built from this object and the parts before it.
 */
export interface ExecutionResources {
  db: Db;
  redis: Redis | null;
  clock: Clock;
  log: Log;
  stores: {
    executions: ExecutionStore;
    workflows: WorkflowStore;
    deliveries: DeliveryStore;
    credentials: CredentialStore;
    dedupe: DedupeStore;
  };
  credentials: CredentialService;
  /** OAuth2 credentials' access tokens (fetched, refreshed and stored sealed). */
  oauth2?: OAuth2Tokens;
  variables: VariableService;
  /** The node types the engines run (the catalogue; tests may pass fewer). */
  nodes: NodeRegistry;
  /** The engine's outbound HTTP client and its `$env`. */
  http: OutboundHttp;
  /** The outbound-address guard for TCP (SSH): resolves a host and refuses private addresses. */
  tcpTarget?: HostAccess['tcpTarget'];
  /** The knowledge base and built-in embedders, bound to an account (platform-ai.ts); absent: off. */
  platformAi?: (accountId: string) => PlatformAiAccess;
  /** The process's CPU pool for nodes' large CPU work (the Token Splitter); absent: inline. */
  cpu?: EngineDeps['cpu'];
  /** The same address rule for SMTP and IMAP clients. */
  outboundHost?: OutboundHostGuard;
  /** The guard of TCP clients (database and Redis nodes): where a credential's host may lead. */
  connectAddress?: AddressGuard;
  env: Record<string, string>;
  signer: ResumeSigner;
  limits: ExecutionLimits;
  jobEvents?: JobEvents;
  /** Calls back after a database outage is over. */
  onDatabaseRecovered(listener: () => void): () => void;
}

/** Engines per account (its credentials only), kept for their compiled-expression caches. */
const ENGINES_MAX = 1_000;

/**
 * The executions room behind one facade: queue, quota, waiters, runner (and its lifecycle hooks'
 * subscribers), maintenance, sub-workflows, the API's service, manual, direct and resumed runs.
 * Built by `createExecutions`; parts refer to each other through this object, never through
 * variables bound later.
 */
export class Executions {
  readonly quota: ExecutionQuota;
  readonly runner: ExecutionRunner;
  readonly maintenance: Maintenance;
  readonly subWorkflows: SubWorkflowRunner;
  readonly service: ExecutionService;
  readonly manual: ManualRunner;
  readonly direct: DirectRunner;
  readonly resumer: ExecutionResumer;
  /** Validation needs no credentials (nor an account: it runs at save, not in an execution). */
  readonly engine: WorkflowEngine;
  private readonly engines = new Map<string, WorkflowEngine>();
  private stopWorker: (() => void) | null = null;

  constructor(
    private readonly res: ExecutionResources,
    readonly queue: JobQueue<ExecutionJob>,
    readonly waiters: ExecutionWaiters,
    interrupted: InterruptedJobs,
  ) {
    const { stores, limits, clock, log } = res;
    this.engine = new WorkflowEngine(this.engineDeps(null), res.nodes);
    this.quota = new ExecutionQuota(
      res.redis
        ? new RedisExecutionCountStore(res.redis, limits.REDIS_PREFIX)
        : new DbExecutionCountStore(res.db),
      { daily: limits.WORKFLOW_DAILY_EXECUTIONS, byAccount: limits.WORKFLOW_DAILY_EXECUTION_OVERRIDES },
      clock,
      log,
    );
    const resumeUrlBase = `${limits.PUBLIC_URL.replace(/\/+$/, '')}/webhook-waiting`;
    this.runner = new ExecutionRunner({
      executions: stores.executions,
      workflows: stores.workflows,
      deliveries: stores.deliveries,
      engineFor: (accountId) => this.engineFor(accountId),
      queue,
      waiters,
      clock,
      log,
      resumeUrlBase,
      signer: res.signer,
      quota: this.quota,
    });
    const runner = this.runner;
    subscribeAll(runner.hooks, {
      executions: stores.executions,
      deliveries: stores.deliveries,
      waiters,
      clock,
      workflows: stores.workflows,
      definition: (id, version) => runner.definition(id, version),
      enqueue: (input) => runner.enqueue(input),
      resumeUrlBase,
      log,
      runsInline: (id) => runner.runsInline(id),
    });
    this.maintenance = new Maintenance({
      executions: stores.executions,
      deliveries: stores.deliveries,
      queue,
      clock,
      log,
      maxAgeDays: limits.EXECUTIONS_MAX_AGE_DAYS,
      maxCount: limits.EXECUTIONS_MAX_COUNT,
      dedupeHours: limits.WEBHOOK_DEDUPE_HOURS,
      rerun: (job) => runner.handle(job),
      interrupted,
    });
    const checks = callerChecks(stores.credentials);
    this.subWorkflows = new SubWorkflowRunner({
      workflows: stores.workflows,
      executions: stores.executions,
      runner,
      maxDepth: limits.WORKFLOW_MAX_CALL_DEPTH,
      assertCallerMayUse: checks.subWorkflow,
      inlineDefinition: (json) => inlineWorkflowDefinition(this.engine, json),
    });
    this.service = new ExecutionService(stores.executions, runner, clock);
    this.manual = new ManualRunner({
      workflows: stores.workflows,
      runner,
      waiters,
      executions: this.service,
      engine: this.engine,
      waitMs: limits.MANUAL_RUN_WAIT_MS,
      assertCallerMayUse: checks.manualRun,
    });
    this.direct = new DirectRunner({
      workflows: stores.workflows,
      executions: stores.executions,
      runner,
      waiters,
    });
    this.resumer = new ExecutionResumer(stores.executions, queue, res.signer);
  }

  /**
   * The engine of one account: it reads only that account's credentials. An explicit binding
   * instead of AsyncLocalStorage, whose promise hooks slow every await.
   */
  engineFor(accountId: string): WorkflowEngine {
    let engine = this.engines.get(accountId);
    if (!engine) {
      if (this.engines.size >= ENGINES_MAX) this.engines.delete(this.engines.keys().next().value as string);
      engine = new VariablesEngine(this.engineDeps(accountId), this.res.nodes, this.res.variables, accountId);
      this.engines.set(accountId, engine);
    }
    return engine;
  }

  private engineDeps(accountId: string | null): EngineDeps {
    const { limits, credentials, clock } = this.res;
    return {
      now: () => clock.now(),
      credential: async (ref, workflowId) => {
        const found = accountId ? await credentials.revealForWorkflow(accountId, ref, workflowId) : null;
        if (!found) throw new Error(`Credential '${ref}' not found`);
        return found.data;
      },
      oauth2Token: async (ref, workflowId, renew) => {
        // The same check as any credential's (who saved the workflow may use it), then its token.
        const found = accountId ? await credentials.revealForWorkflow(accountId, ref, workflowId) : null;
        if (!found || !accountId || !this.res.oauth2) throw new Error(`Credential '${ref}' not found`);
        return this.res.oauth2.token(accountId, ref, renew);
      },
      http: this.res.http,
      ...(this.res.outboundHost ? { outboundHost: this.res.outboundHost } : {}),
      ...(this.res.connectAddress ? { connectAddress: this.res.connectAddress } : {}),
      env: this.res.env,
      expressionTimeoutMs: limits.EXPRESSION_TIMEOUT_MS,
      codeTimeoutMs: limits.CODE_NODE_TIMEOUT_MS,
      tenant: accountId ?? 'system',
      maxWaitMs: limits.WORKFLOW_MAX_WAIT_SECONDS * 1_000,
      maxNodeRuns: limits.WORKFLOW_MAX_NODE_RUNS,
      s3MaxDownloadBytes: limits.S3_MAX_DOWNLOAD_BYTES,
      dedupe: this.res.stores.dedupe,
      host: this.hostAccessFor(accountId),
      ...(accountId && this.res.platformAi ? { platformAi: this.res.platformAi(accountId) } : {}),
      ...(this.res.cpu ? { cpu: this.res.cpu } : {}),
      subWorkflow: async (call) => {
        if (!accountId) throw new Error('Sub-workflows run only in an account’s execution');
        return this.subWorkflows.call(accountId, call);
      },
    };
  }

  /** The host-reaching nodes' settings; files are confined to the account's own subfolder. */
  hostAccessFor(accountId: string | null): HostAccess {
    const { limits } = this.res;
    const root = limits.WORKFLOW_FILES_DIR.trim();
    const bounds = {
      timeoutMs: limits.EXECUTE_COMMAND_TIMEOUT_MS,
      maxOutputBytes: limits.EXECUTE_COMMAND_MAX_OUTPUT_BYTES,
    };
    return {
      filesDir:
        root === '' ? null : accountId ? path.join(path.resolve(root), accountId) : path.resolve(root),
      executeCommand: { enabled: limits.WORKFLOW_EXECUTE_COMMAND_ENABLED, ...bounds },
      ssh: { enabled: limits.WORKFLOW_SSH_ENABLED, ...bounds },
      python: { enabled: limits.WORKFLOW_PYTHON_ENABLED },
      tcpTarget:
        this.res.tcpTarget ??
        (async () => {
          throw new Error('Outbound TCP is not configured');
        }),
    };
  }

  /** Starts running queued executions in this process (recovery first); false if it runs already. */
  async startWorker(): Promise<boolean> {
    if (this.stopWorker) return false;
    const { limits, log } = this.res;
    this.queue.work((job) => this.runner.handle(job), limits.WORKFLOW_CONCURRENCY);
    const upkeep = this.maintenance;
    const recovered = await upkeep.recover();
    if (recovered.requeued + recovered.resumed + recovered.crashed > 0)
      log.info(recovered, 'workflow executions recovered');
    // After a database outage too, not only at start: what the fault interrupted goes on.
    const unwatch = this.res.onDatabaseRecovered(() => {
      upkeep.afterReconnect().catch((err: unknown) => log.error({ err }, 'recovery after reconnect failed'));
    });
    const stopMaintenance = upkeep.schedule(limits.EXECUTIONS_PRUNE_INTERVAL_SECONDS);
    this.stopWorker = () => {
      unwatch();
      stopMaintenance();
    };
    return true;
  }

  async close(): Promise<void> {
    this.stopWorker?.();
    await this.queue.close();
    await this.waiters.close();
  }
}

/** Builds the executions room from its resources: the queue and the waiters first (they connect). */
export async function createExecutions(res: ExecutionResources): Promise<Executions> {
  const { limits, log } = res;
  const interrupted = new InterruptedJobs();
  const queue = await createQueue(jobs.workflowExecution, {
    redisUrl: limits.REDIS_URL,
    prefix: limits.QUEUE_PREFIX,
    stallSeconds: limits.QUEUE_STALL_SECONDS,
    commandTimeoutMs: limits.REDIS_COMMAND_TIMEOUT_MS,
    onError: (err, jobId) => {
      // Interrupted by a dependency's fault: taken up again once it is back (maintenance.ts).
      if (interrupted.note(err, jobId)) log.warn({ err, jobId }, 'workflow job interrupted by a fault');
      else log.error({ err, jobId }, 'workflow job failed');
    },
    observer: res.jobEvents?.observe,
    // Accounts served round-robin, each with at most this many executions running.
    fairness: { groupOf: accountOfJob, perGroup: limits.WORKFLOW_ACCOUNT_CONCURRENCY },
  });
  const waiters = new ExecutionWaiters(res.redis, `${limits.QUEUE_PREFIX}:workflow-executions:done`, {
    read: (ids) => res.stores.executions.outcomes(ids),
    commandTimeoutMs: limits.REDIS_COMMAND_TIMEOUT_MS,
    onError: (err, what) => log.warn({ err }, `workflow waiters: ${what} failed`),
  });
  await waiters.start();
  return new Executions(res, queue, waiters, interrupted);
}
