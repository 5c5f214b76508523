import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { AppContext, PlatformModule } from '../../core/context.js';
import { cpuPoolOf } from '../../core/cpu/index.js';
import { AppError } from '../../core/errors.js';
import { checkedTcpTarget, createAddressGuard, createOutboundHttp } from '../../core/http/outbound.js';
import { createOutboundHostGuard } from '../../core/http/outbound-host.js';
import { configureUserRegex } from '../../core/regex/user-regex.js';
import { auditRoutes } from './audit/routes.js';
import { AuditService } from './audit/service.js';
import { OAuth2Tokens } from './credentials/oauth2/access-tokens.js';
import { CredentialConsent } from './credentials/oauth2/consent.js';
import { ConsentStore } from './credentials/oauth2/consent-store.js';
import { RenewalLease } from './credentials/oauth2/renewal-lease.js';
import { oauth2Routes } from './credentials/oauth2/routes.js';
import { CredentialService } from './credentials/service.js';
import { CredentialStore } from './credentials/store.js';
import { WorkflowService } from './definitions/service.js';
import { WorkflowStore } from './definitions/store.js';
import { configureExpressionSandbox, configurePythonSandbox } from './engine/index.js';
import { DedupeStore } from './executions/dedupe-store.js';
import type { DirectRunner } from './executions/direct-run.js';
import { createExecutions } from './executions/index.js';
import type { Maintenance } from './executions/maintenance.js';
import { ResumeSigner } from './executions/resume-signature.js';
import type { ExecutionResumer } from './executions/resumer.js';
import type { ExecutionRunner } from './executions/runner.js';
import type { ExecutionService } from './executions/service.js';
import { ExecutionStore } from './executions/store.js';
import { TriggerListeners } from './listeners/trigger-listeners.js';
import { defaultNodeRegistry } from './nodes/index.js';
import { platformAiFor } from './nodes/platform/platform-ai.js';
import { nodeTypeRoutes } from './nodes/routes.js';
import { peopleRoutes } from './people/routes.js';
import { PeopleService } from './people/service.js';
import { workflowRoutes } from './routes.js';
import { ScheduleStore } from './schedule/schedule-store.js';
import { Scheduler } from './schedule/scheduler.js';
import type { WorkflowBodyT } from './schemas.js';
import { sourceControlRoutes } from './source-control/routes.js';
import { SourceControlService } from './source-control/service.js';
import { ExecutionTagService } from './tags/execution-tags.js';
import { tagRoutes } from './tags/routes.js';
import { TagService } from './tags/service.js';
import { TagStore } from './tags/store.js';
import { variableRoutes } from './variables/routes.js';
import { VariableService } from './variables/service.js';
import { VariableStore } from './variables/store.js';
import { DeliveryStore } from './webhooks/delivery-store.js';
import { WebhookRegistrations } from './webhooks/registrations.js';
import { webhookRoutes } from './webhooks/routes.js';
import { WebhookService } from './webhooks/service.js';
import './tables.js';
import { workflowsMigrations } from './migrations/index.js';

/** Notion-style blocks to Markdown (the `markdown` node's converter), for the knowledge base's workspace source. */
/** A JSON value as nodes and items carry it. */
export type { Json } from './engine/index.js';
/** What a workflow run answers a webhook call or a direct run (flows and agents read it). */
export type { StoredResponse } from './webhooks/response.js';

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
  /** The listening triggers (IMAP, RSS) of active workflows, running with the worker; `sync()` for tests. */
  listeners: TriggerListeners;
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
  consent: CredentialConsent;
  variables: VariableService;
  tags: TagService;
  executionTags: ExecutionTagService;
  sourceControl: SourceControlService;
  webhooks: WebhookService;
  resumer: ExecutionResumer;
  audit: AuditService;
  people: PeopleService;
}
const internals = new WeakMap<AppContext, Internals>();

/**
 * The downstream URL settings workflows call (`$env.LLM_URL`, …); empty ones point at this server.
 * These, and only these, are trusted by the outbound guard: an operator names them to be reached.
 */
function downstreamUrls(ctx: AppContext): Record<string, string> {
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
  return urls;
}

/**
 * Operator-set downstreams are trusted by the outbound guard (they may be on a private network). Not
 * the other `EXPRESSION_ENV_ALLOWLIST` values: a variable shown to expressions (a cache's URL) must not
 * open its host to every account's HTTP Request.
 */
function trustedHosts(urls: Record<string, string>, configured: string): string[] {
  const hosts = configured
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  for (const value of Object.values(urls)) {
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

async function readDefinitions(
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

/** The account's active keys that match `keep`, read through the auth module's key list, page by page. */
async function activeKeysWhere(
  ctx: AppContext,
  accountId: string,
  keep: (key: Record<string, unknown>) => boolean,
) {
  const keys = ctx.apis.auth?.keys;
  const out: Array<{ id: string; name: string }> = [];
  if (!keys) return out;
  let cursor: string | null = null;
  do {
    const page: { data: Array<Record<string, unknown>>; nextCursor: string | null } = await keys.list(
      accountId,
      { limit: 200, ...(cursor ? { cursor } : {}) },
    );
    for (const k of page.data)
      if (k.status === 'active' && keep(k)) out.push({ id: String(k.id), name: String(k.name) });
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/** The account's active keys with no IP rule. */
const keysWithoutIpRules = (ctx: AppContext, accountId: string) =>
  activeKeysWhere(ctx, accountId, (k) => Array.isArray(k.allowedIps) && k.allowedIps.length === 0);

/** The account's active keys (n8n's personal projects, beside members). */
const activeKeys = (ctx: AppContext, accountId: string) => activeKeysWhere(ctx, accountId, () => true);

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
      timezone: config.GENERIC_TIMEZONE,
    });
    configurePythonSandbox({
      workers: config.PYTHON_WORKERS,
      memoryMb: config.PYTHON_MEMORY_MB,
      queuePerAccount: config.PYTHON_QUEUE_PER_ACCOUNT,
      onWarning: (message) => log.warn(message),
    });
    configureUserRegex({
      workers: config.REGEX_WORKERS,
      timeoutMs: config.REGEX_TIMEOUT_MS,
      maxPatternLength: config.REGEX_MAX_LENGTH,
    });
    const urls = downstreamUrls(ctx);
    const env = { ...config.EXPRESSION_ENV, ...urls };
    const workflowStore = new WorkflowStore(ctx.db);
    const executionStore = new ExecutionStore(ctx.db);
    const deliveries = new DeliveryStore(ctx.db);
    const credentialStore = new CredentialStore(ctx.db);
    // One outbound-address rule for every client a workflow points somewhere. HTTP also trusts the
    // hosts of the platform's own service URLs; raw TCP clients (SSH, SMTP/IMAP, databases, Redis, and
    // the credential test) only what OUTBOUND_ALLOW_HOSTS names: a URL without a port would otherwise
    // open every port of its host, the platform's own database included.
    const allowHosts = trustedHosts(urls, config.OUTBOUND_ALLOW_HOSTS);
    const tcpAllowHosts = config.OUTBOUND_ALLOW_HOSTS.split(',');
    const connectAddress = createAddressGuard(tcpAllowHosts);
    const http = createOutboundHttp({ allowHosts, timeoutMs: config.OUTBOUND_TIMEOUT_MS });
    const credentialBox = ctx.secrets.box('workflow-credentials');
    const credentials = new CredentialService(credentialStore, credentialBox, clock, connectAddress, http, {
      ttlMs: config.CREDENTIAL_CACHE_SECONDS * 1_000,
      max: 1_000,
    });
    const oauth2 = new OAuth2Tokens({
      store: credentialStore,
      lease: new RenewalLease(ctx.db),
      box: credentialBox,
      clock,
      http,
      forgetRevealed: (accountId) => credentials.forgetRevealed(accountId),
    });
    const consent = new CredentialConsent({
      credentials: credentialStore,
      consents: new ConsentStore(ctx.db),
      tokens: oauth2,
      box: credentialBox,
      clock,
      http,
      publicUrl: env.PUBLIC_URL ?? config.PUBLIC_URL.replace(/\/+$/, ''),
      accountName: async (id) => (await ctx.apis.auth?.account(id))?.name ?? null,
    });
    const variables = new VariableService(new VariableStore(ctx.db), clock);
    const tags = new TagService(new TagStore(ctx.db), clock);
    const outboundHost = createOutboundHostGuard({ allowHosts: tcpAllowHosts });
    const dedupe = new DedupeStore(ctx.db, () => clock.now());
    const executions = await createExecutions({
      db: ctx.db,
      redis: ctx.redis,
      clock,
      log,
      stores: {
        executions: executionStore,
        workflows: workflowStore,
        deliveries,
        credentials: credentialStore,
        dedupe,
      },
      credentials,
      oauth2,
      variables,
      nodes: defaultNodeRegistry,
      http,
      tcpTarget: (host, port) => checkedTcpTarget(host, port, tcpAllowHosts),
      outboundHost,
      connectAddress,
      platformAi: platformAiFor(ctx),
      cpu: { pool: cpuPoolOf(ctx), timeoutMs: config.CPU_TASK_TIMEOUT_MS },
      env,
      signer: new ResumeSigner(ctx.secrets.derive('workflow:resume-urls')),
      limits: config,
      ...(ctx.jobEvents ? { jobEvents: ctx.jobEvents } : {}),
      onDatabaseRecovered: (listener) => ctx.database.onRecovered(listener),
    });
    const { runner, waiters } = executions;
    const scheduler = new Scheduler({
      store: new ScheduleStore(ctx.db),
      evaluate: (accountId, def, expression) =>
        executions.engineFor(accountId).evaluateExpression(def, expression, {}),
      maxRulesPerAccount: config.WORKFLOW_MAX_SCHEDULES,
      workflows: workflowStore,
      runner,
      clock,
      log,
    });
    const listeners = new TriggerListeners({
      workflows: workflowStore,
      nodes: defaultNodeRegistry,
      runner,
      deps: {
        now: () => clock.now(),
        http,
        outboundHost,
        connectAddress,
        dedupe,
        env,
        expressionTimeoutMs: config.EXPRESSION_TIMEOUT_MS,
      },
      hostOf: (accountId) => executions.hostAccessFor(accountId),
      credential: async (accountId, ref, workflowId) => {
        const found = await credentials.revealForWorkflow(accountId, ref, workflowId);
        if (!found) throw new Error(`Credential '${ref}' not found`);
        return found.data;
      },
      clock,
      log,
      syncMs: config.TRIGGER_LISTENER_SYNC_SECONDS * 1_000,
    });
    const auth = ctx.apis.auth;
    if (!auth) throw new Error('The workflows module needs the auth module');
    const webhooks = new WebhookService({
      workflows: workflowStore,
      executions: executionStore,
      deliveries,
      runner,
      waiters,
      engineFor: (accountId) => executions.engineFor(accountId),
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
    const registrations = new WebhookRegistrations({
      nodes: defaultNodeRegistry,
      http,
      credential: async (accountId, ref, workflowId) => {
        const found = await credentials.revealForWorkflow(accountId, ref, workflowId);
        if (!found) throw new Error(`Credential '${ref}' not found`);
        return found.data;
      },
      publicUrl: config.PUBLIC_URL,
      log,
    });
    const workflows = new WorkflowService({
      schedules: scheduler,
      registrations,
      callCycles: (accountId, def) => executions.subWorkflows.cycleProblems(accountId, def),
      testWebhookSeconds: config.TEST_WEBHOOK_SECONDS,
      store: workflowStore,
      credentials: credentialStore,
      engine: executions.engine,
      clock,
      onRoutesChanged: (paths) => webhooks.invalidate(paths),
      onWorkflowChanged: (accountId, id) => {
        credentials.forgetRevealed(accountId);
        void listeners.refresh(accountId, id);
      },
      onTagsSaved: (accountId, names) => tags.ensure(accountId, names),
    });

    const stopScheduler: Array<() => Promise<void>> = [];
    const startWorker = async () => {
      if (!(await executions.startWorker())) return;
      stopScheduler.push(scheduler.start(), listeners.start());
    };
    ctx.onClose(async () => {
      for (const stop of stopScheduler.splice(0)) await stop();
      await executions.close();
    });

    internals.set(ctx, {
      routes: {
        workflows,
        executions: executions.service,
        credentials,
        manual: executions.manual,
        knownPrincipal: (accountId, actor) => knownPrincipal(ctx, accountId, actor),
      },
      consent,
      variables,
      tags,
      executionTags: new ExecutionTagService(ctx.db, clock),
      sourceControl: new SourceControlService(
        workflows,
        {
          repoUrl: config.SOURCE_CONTROL_REPO_URL,
          branch: config.SOURCE_CONTROL_BRANCH,
          timeoutMs: config.SOURCE_CONTROL_TIMEOUT_MS,
          allowFile: config.SOURCE_CONTROL_ALLOW_FILE,
        },
        connectAddress,
      ),
      webhooks,
      resumer: executions.resumer,
      people: new PeopleService({
        members: async (accountId) => (await ctx.apis.portal?.members.list(accountId)) ?? [],
        activeKeys: (accountId) => activeKeys(ctx, accountId),
      }),
      audit: new AuditService({
        db: ctx.db,
        workflows: workflowStore,
        clock,
        keysWithoutIpRules: (accountId) => keysWithoutIpRules(ctx, accountId),
        securitySettings: {
          outboundAllowHosts: config.OUTBOUND_ALLOW_HOSTS.split(',').filter((h) => h.trim() !== ''),
          expressionEnvAllowlist: Object.keys(config.EXPRESSION_ENV),
          codeNodeTimeoutMs: config.CODE_NODE_TIMEOUT_MS,
          expressionTimeoutMs: config.EXPRESSION_TIMEOUT_MS,
          webhookHmacToleranceSeconds: config.WEBHOOK_HMAC_TOLERANCE_SECONDS,
        },
      }),
    });
    ctx.apis.workflows = {
      workflows,
      executions: executions.service,
      credentials,
      runner,
      direct: executions.direct,
      maintenance: executions.maintenance,
      scheduler,
      listeners,
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
    oauth2Routes(
      app,
      deps.consent,
      async (request) => (await ctx.apis.auth?.authenticator.sessionOf(request)) ?? null,
    );
    nodeTypeRoutes(app, defaultNodeRegistry);
    variableRoutes(app, deps.variables);
    tagRoutes(app, deps.tags, deps.executionTags);
    sourceControlRoutes(app, deps.sourceControl);
    auditRoutes(app, deps.audit);
    peopleRoutes(app, deps.people);
    webhookRoutes(app, {
      webhooks: deps.webhooks,
      resumer: deps.resumer,
      defaultBodyLimit: ctx.config.WEBHOOK_BODY_LIMIT_BYTES,
      parsedBodyLimit: ctx.config.WEBHOOK_JSON_LIMIT_BYTES,
      formUploadLimit: ctx.config.FORM_UPLOAD_MAX_BYTES,
      sandbox: ctx.config.WORKFLOW_WEBHOOK_SANDBOX,
    });
  },
};
