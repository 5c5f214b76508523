import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { AppContext, PlatformModule } from '../../core/context.js';
import { AppError } from '../../core/errors.js';
import { createOutboundHttp } from '../../core/http/outbound.js';
import { createQueue, jobs } from '../../core/queue/index.js';
import { configureUserRegex } from '../../core/regex/user-regex.js';
import { callerChecks } from './credential-access.js';
import { CredentialService } from './credential-service.js';
import { CredentialStore } from './credential-store.js';
import { DedupeStore } from './dedupe-store.js';
import { DeliveryStore } from './delivery-store.js';
import { DirectRunner } from './direct-run.js';
import { configureExpressionSandbox, type EngineDeps, WorkflowEngine } from './engine/index.js';
import { DbExecutionCountStore, RedisExecutionCountStore } from './execution-count-store.js';
import { ExecutionQuota } from './execution-quota.js';
import { ExecutionResumer } from './execution-resumer.js';
import { accountOfJob, ExecutionRunner } from './execution-runner.js';
import { ExecutionService } from './execution-service.js';
import { ExecutionStore } from './execution-store.js';
import { ExecutionWaiters } from './execution-waiters.js';
import { Maintenance } from './maintenance.js';
import { ManualRunner } from './manual-run.js';
import { ResumeSigner } from './resume-signature.js';
import { workflowRoutes } from './routes.js';
import { ScheduleStore } from './schedule/schedule-store.js';
import { Scheduler } from './schedule/scheduler.js';
import type { WorkflowBodyT } from './schemas.js';
import { SubWorkflowRunner } from './sub-workflow.js';
import { tagRoutes } from './tag-routes.js';
import { TagService } from './tag-service.js';
import { TagStore } from './tag-store.js';
import { VariablesEngine } from './variable-engine.js';
import { variableRoutes } from './variable-routes.js';
import { VariableService } from './variable-service.js';
import { VariableStore } from './variable-store.js';
import { webhookRoutes } from './webhook-routes.js';
import { WebhookService } from './webhook-service.js';
import { WorkflowService } from './workflow-service.js';
import { WorkflowStore } from './workflow-store.js';
import './tables.js';
import { workflowsMigrations } from './migrations/index.js';

/** Notion-style blocks to Markdown (the `markdown` node's converter), for the knowledge base's workspace source. */
export { blocksToMarkdown } from './nodes/markdown.js';

export interface WorkflowsApi {
  workflows: WorkflowService;
  executions: ExecutionService;
  credentials: CredentialService;
  runner: ExecutionRunner;
  /** Runs a workflow for a flow or an agent and waits for its answer. */
  direct: DirectRunner;
  maintenance: Maintenance;
  /** Starts the runs of Schedule Triggers (its timer runs with the worker; `tick()` for tests). */
  scheduler: Scheduler;
  /** Imports the JSON definitions of a folder, each once ever (first start). */
  importShipped(accountId: string, dir?: string): Promise<string[]>;
  /** Starts running queued executions in this process (recovery first). */
  startWorker(): Promise<void>;
}

declare module '../../core/context.js' {
  interface ModuleApis {
    workflows: WorkflowsApi;
  }
}

interface Internals {
  routes: Parameters<typeof workflowRoutes>[1];
  variables: VariableService;
  tags: TagService;
  webhooks: WebhookService;
  resumer: ExecutionResumer;
}
const internals = new WeakMap<AppContext, Internals>();

/** Downstream URLs of the named workflows, as `$env`; empty ones point at this server. */
function downstreamEnv(ctx: AppContext): Record<string, string> {
  const c = ctx.config;
  const self = c.PUBLIC_URL.replace(/\/+$/, '');
  const urls = {
    PUBLIC_URL: self,
    WORKSPACE_API_URL: c.WORKSPACE_API_URL,
    DOCS_API_URL: c.DOCS_API_URL || self,
    LLM_URL: c.LLM_URL || self,
    FLOW_URL: c.FLOW_URL || self,
    DOCPROC_URL: c.DOCPROC_URL || self,
    ORDERS_URL: c.ORDERS_URL || self,
    USERS_URL: c.USERS_URL || self,
  };
  return { ...c.EXPRESSION_ENV, ...urls };
}

/** Operator-set downstreams are trusted by the outbound guard (they may be on a private network). */
function trustedHosts(env: Record<string, string>, configured: string): string[] {
  const hosts = configured
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  for (const value of Object.values(env)) {
    try {
      const url = new URL(value);
      hosts.push(url.host);
    } catch {
      // not a URL: nothing to trust
    }
  }
  return hosts;
}

async function definitionFiles(dir: string): Promise<string[]> {
  const info = await stat(dir).catch(() => null);
  if (!info) return [];
  if (info.isFile()) return [dir];
  const names = await readdir(dir);
  return names
    .filter((n) => n.endsWith('.json'))
    .sort()
    .map((n) => path.join(dir, n));
}

export async function readDefinitions(
  target: string,
): Promise<Array<{ file: string; body: WorkflowBodyT & { id?: string } }>> {
  const files = await definitionFiles(target);
  const out = [];
  for (const file of files) {
    let body: unknown;
    try {
      body = JSON.parse(await readFile(file, 'utf8'));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new AppError('VALIDATION_ERROR', `${file}: not valid JSON (${reason})`);
    }
    out.push({ file, body: body as WorkflowBodyT & { id?: string } });
  }

  return out;
}

/** Whether `key:<id>` or `member:<id>` names a live key or a member of the account. */
async function knownPrincipal(ctx: AppContext, accountId: string, actor: string): Promise<boolean> {
  const [kind, id = ''] = actor.split(':');
  if (kind === 'key') {
    const key = await ctx.apis.auth?.keys.get(accountId, id).catch(() => null);
    return key !== null && key !== undefined && key.status === 'active';
  }
  if (kind === 'member')
    return ((await ctx.apis.portal?.members.list(accountId)) ?? []).some((m) => m.id === id);
  return false;
}

export const workflowsModule: PlatformModule = {
  name: 'workflows',
  services: ['workflow'],
  migrations: workflowsMigrations,

  async init(ctx) {
    const { config, clock, log } = ctx;
    configureExpressionSandbox({
      workers: config.EXPRESSION_WORKERS,
      memoryMb: config.EXPRESSION_MEMORY_MB,
      perTenant: config.EXPRESSION_WORKERS_PER_ACCOUNT,
    });
    configureUserRegex({
      workers: config.REGEX_WORKERS,
      timeoutMs: config.REGEX_TIMEOUT_MS,
      maxPatternLength: config.REGEX_MAX_LENGTH,
    });
    const env = downstreamEnv(ctx);
    const workflowStore = new WorkflowStore(ctx.db);
    const executionStore = new ExecutionStore(ctx.db);
    const deliveries = new DeliveryStore(ctx.db);
    const dedupe = new DedupeStore(ctx.db, () => clock.now());
    const credentialStore = new CredentialStore(ctx.db);
    const credentials = new CredentialService(
      credentialStore,
      ctx.secrets.box('workflow-credentials'),
      clock,
    );
    const variables = new VariableService(new VariableStore(ctx.db), clock);
    const tags = new TagService(new TagStore(ctx.db), clock);
    const http = createOutboundHttp({
      allowHosts: trustedHosts(env, config.OUTBOUND_ALLOW_HOSTS),
      timeoutMs: config.OUTBOUND_TIMEOUT_MS,
    });
    // Bound once the runner exists (the runner needs the engines these deps build).
    let subWorkflows: SubWorkflowRunner | null = null;
    const engineDeps = (accountId: string | null): EngineDeps => ({
      now: () => clock.now(),
      credential: async (ref, workflowId) => {
        const found = accountId ? await credentials.revealForWorkflow(accountId, ref, workflowId) : null;
        if (!found) throw new Error(`Credential '${ref}' not found`);
        return found.data;
      },
      http,
      env,
      expressionTimeoutMs: config.EXPRESSION_TIMEOUT_MS,
      codeTimeoutMs: config.CODE_NODE_TIMEOUT_MS,
      tenant: accountId ?? 'system',
      maxWaitMs: config.WORKFLOW_MAX_WAIT_SECONDS * 1_000,
      maxNodeRuns: config.WORKFLOW_MAX_NODE_RUNS,
      dedupe,
      subWorkflow: async (call) => {
        if (!subWorkflows || !accountId) throw new Error('Sub-workflows run only in an account’s execution');
        return subWorkflows.call(accountId, call);
      },
    });
    // One engine per account (its credentials only), kept for their compiled-expression caches;
    // an explicit binding instead of AsyncLocalStorage, whose promise hooks slow every await.
    const engines = new Map<string, WorkflowEngine>();
    const engineFor = (accountId: string): WorkflowEngine => {
      let engine = engines.get(accountId);
      if (!engine) {
        if (engines.size >= 1_000) engines.delete(engines.keys().next().value as string);
        engine = new VariablesEngine(engineDeps(accountId), variables, accountId);
        engines.set(accountId, engine);
      }
      return engine;
    };
    /** Validation needs no credentials (nor an account: it runs at save, not in an execution). */
    const engine = new WorkflowEngine(engineDeps(null));
    let maintenance: Maintenance | null = null;
    const queue = await createQueue(jobs.workflowExecution, {
      redisUrl: config.REDIS_URL,
      prefix: config.QUEUE_PREFIX,
      stallSeconds: config.QUEUE_STALL_SECONDS,
      commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
      onError: (err, jobId) => {
        // Interrupted by a dependency's fault: taken up again once it is back (maintenance.ts).
        if (maintenance?.noteFailure(err, jobId))
          log.warn({ err, jobId }, 'workflow job interrupted by a fault');
        else log.error({ err, jobId }, 'workflow job failed');
      },
      observer: ctx.jobEvents?.observe,
      // Accounts served round-robin, each with at most this many executions running.
      fairness: { groupOf: accountOfJob, perGroup: config.WORKFLOW_ACCOUNT_CONCURRENCY },
    });
    const quota = new ExecutionQuota(
      ctx.redis
        ? new RedisExecutionCountStore(ctx.redis, config.REDIS_PREFIX)
        : new DbExecutionCountStore(ctx.db),
      { daily: config.WORKFLOW_DAILY_EXECUTIONS, byAccount: config.WORKFLOW_DAILY_EXECUTION_OVERRIDES },
      clock,
      log,
    );
    const waiters = new ExecutionWaiters(ctx.redis, `${config.QUEUE_PREFIX}:workflow-executions:done`, {
      read: (ids) => executionStore.outcomes(ids),
      commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
      onError: (err, what) => log.warn({ err }, `workflow waiters: ${what} failed`),
    });
    await waiters.start();
    const signer = new ResumeSigner(ctx.secrets.derive('workflow:resume-urls'));
    const runner = new ExecutionRunner({
      executions: executionStore,
      workflows: workflowStore,
      deliveries,
      credentials,
      engineFor,
      queue,
      waiters,
      clock,
      log,
      resumeUrlBase: `${config.PUBLIC_URL.replace(/\/+$/, '')}/webhook-waiting`,
      signer,
      quota,
    });
    maintenance = new Maintenance({
      executions: executionStore,
      deliveries,
      queue,
      clock,
      log,
      maxAgeDays: config.EXECUTIONS_MAX_AGE_DAYS,
      maxCount: config.EXECUTIONS_MAX_COUNT,
      dedupeHours: config.WEBHOOK_DEDUPE_HOURS,
      rerun: (job) => runner.handle(job),
    });
    const upkeep = maintenance;
    subWorkflows = new SubWorkflowRunner({
      workflows: workflowStore,
      executions: executionStore,
      runner,
      maxDepth: config.WORKFLOW_MAX_CALL_DEPTH,
      assertCallerMayUse: callerChecks(credentialStore).subWorkflow,
    });
    const calls = subWorkflows;
    const scheduler = new Scheduler({
      store: new ScheduleStore(ctx.db),
      maxRulesPerAccount: config.WORKFLOW_MAX_SCHEDULES,
      workflows: workflowStore,
      runner,
      clock,
      log,
    });
    let webhooks: WebhookService | null = null;
    const workflows = new WorkflowService({
      schedules: scheduler,
      callCycles: (accountId, def) => calls.cycleProblems(accountId, def),
      testWebhookSeconds: config.TEST_WEBHOOK_SECONDS,
      store: workflowStore,
      credentials: credentialStore,
      engine,
      clock,
      onRoutesChanged: (paths) => webhooks?.invalidate(paths),
      onTagsSaved: (accountId, names) => tags.ensure(accountId, names),
    });
    const auth = ctx.apis.auth;
    if (!auth) throw new Error('The workflows module needs the auth module');
    webhooks = new WebhookService({
      workflows: workflowStore,
      executions: executionStore,
      deliveries,
      runner,
      waiters,
      engineFor,
      auth: {
        reveal: (a, r) => credentials.reveal(a, r),
        verifyApiKey: (v) => auth.verifyApiKey(v),
        limiter: ctx.limiter,
        usage: auth.usage,
        now: () => clock.now(),
        hmacToleranceSeconds: config.WEBHOOK_HMAC_TOLERANCE_SECONDS,
      },
      clock,
      responseTimeoutMs: config.WEBHOOK_RESPONSE_TIMEOUT_MS,
      queueOutageMs: config.WEBHOOK_QUEUE_OUTAGE_MS,
      dedupeHours: config.WEBHOOK_DEDUPE_HOURS,
    });
    const executions = new ExecutionService(executionStore, runner, clock);
    const manual = new ManualRunner({
      workflows: workflowStore,
      runner,
      waiters,
      executions,
      engine,
      waitMs: config.MANUAL_RUN_WAIT_MS,
      assertCallerMayUse: callerChecks(credentialStore).manualRun,
    });
    const direct = new DirectRunner({
      workflows: workflowStore,
      executions: executionStore,
      runner,
      waiters,
    });

    let stopSchedule: (() => void) | null = null;
    let stopScheduler: (() => Promise<void>) | null = null;
    const startWorker = async () => {
      if (stopSchedule) return;
      queue.work((job) => runner.handle(job), config.WORKFLOW_CONCURRENCY);
      const recovered = await upkeep.recover();
      if (recovered.requeued + recovered.resumed + recovered.crashed > 0)
        log.info(recovered, 'workflow executions recovered');
      // After a database outage too, not only at start: what the fault interrupted goes on.
      const unwatch = ctx.database.onRecovered(() => {
        upkeep
          .afterReconnect()
          .catch((err: unknown) => log.error({ err }, 'recovery after reconnect failed'));
      });
      const stopMaintenance = upkeep.schedule(config.EXECUTIONS_PRUNE_INTERVAL_SECONDS);
      stopSchedule = () => {
        unwatch();
        stopMaintenance();
      };
      stopScheduler = scheduler.start();
    };
    ctx.onClose(async () => {
      stopSchedule?.();
      await stopScheduler?.();
      await queue.close();
      await waiters.close();
    });

    internals.set(ctx, {
      routes: {
        workflows,
        executions,
        credentials,
        manual,
        knownPrincipal: (accountId, actor) => knownPrincipal(ctx, accountId, actor),
      },
      variables,
      tags,
      webhooks,
      resumer: new ExecutionResumer(executionStore, queue, signer),
    });
    ctx.apis.workflows = {
      workflows,
      executions,
      credentials,
      runner,
      direct,
      maintenance: upkeep,
      scheduler,
      startWorker,
      importShipped: async (accountId, dir = config.WORKFLOWS_DIR) => {
        const imported: string[] = [];
        for (const { file, body } of await readDefinitions(dir)) {
          try {
            if ((await workflows.importOnce(accountId, body)) === 'imported') imported.push(body.id ?? file);
          } catch (err) {
            log.error({ err, file }, 'shipped workflow could not be imported');
          }
        }
        return imported;
      },
    };
    if (config.WORKFLOW_WORKER && ctx.services.has('workflow')) await startWorker();
  },

  routes(app, ctx) {
    const deps = internals.get(ctx);
    if (!deps) throw new Error('workflows module not initialised');
    workflowRoutes(app, deps.routes);
    variableRoutes(app, deps.variables);
    tagRoutes(app, deps.tags);
    webhookRoutes(app, {
      webhooks: deps.webhooks,
      resumer: deps.resumer,
      defaultBodyLimit: ctx.config.WEBHOOK_BODY_LIMIT_BYTES,
      parsedBodyLimit: ctx.config.WEBHOOK_JSON_LIMIT_BYTES,
    });
  },
};
