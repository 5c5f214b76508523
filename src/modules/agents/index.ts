import { accountPrincipal, type Principal } from '../../core/auth/principal.js';
import type { AppContext, PlatformModule } from '../../core/context.js';
import { AppError } from '../../core/errors.js';
import { createOutboundHttp } from '../../core/http/outbound.js';
import { createQueue, jobs } from '../../core/queue/index.js';
import { definitionLookups } from '../flows/index.js';
import type { AgentMessaging } from './agent-events.js';
import { AgentService } from './agent-service.js';
import { AgentStore } from './agent-store.js';
import { ArchivalMemory } from './archival-memory.js';
import { BackgroundRuns } from './background-runs.js';
import { ConversationService } from './conversation-service.js';
import type { McpConnectorOptions } from './mcp-client.js';
import { McpToolSaver } from './mcp-save.js';
import { memoryRoutes } from './memory-routes.js';
import { MemoryService } from './memory-service.js';
import { MemoryStore } from './memory-store.js';
import { AgentMessenger, type RunPrincipal } from './messaging.js';
import { responsesRoutes } from './responses-routes.js';
import { ResponsesService } from './responses-service.js';
import { type AgentRouteDeps, agentRoutes } from './routes.js';
import type { ToolDeps } from './tools.js';
import { agentSocketRoutes } from './ws-routes.js';
import './tables.js';
import { agentsMigrations } from './migrations/index.js';

/** The one MCP client (the agents' tools, and n8n's MCP Client Tool node in workflows). */
export {
  McpConnection,
  type McpConnectionOptions,
  type McpEndpoint,
  McpToolError,
} from './mcp-client.js';

/** What other modules (user profiles, workflows) use of the agent API. */
interface AgentsApi {
  agents: AgentService;
  messaging: AgentMessaging;
  /** Records a new user's welcome message (a conversation no agent holds yet). */
  welcome(accountId: string, userId: string, displayName: string): Promise<{ conversationId: string }>;
}

declare module '../../core/context.js' {
  interface ModuleApis {
    agents: AgentsApi;
  }
}

const internals = new WeakMap<
  AppContext,
  AgentRouteDeps & { responses: ResponsesService; memory: MemoryService; archival: ArchivalMemory | null }
>();

export const agentsModule: PlatformModule = {
  name: 'agents',
  services: ['agent'],
  migrations: agentsMigrations,

  async init(ctx) {
    const llm = ctx.apis.llm;
    if (!llm) throw new Error('The agents module needs the llm module');
    const knowledge = ctx.apis.documents?.knowledge ?? null;
    const store = new AgentStore(ctx.db);
    const lookups = definitionLookups(ctx, llm);
    const { config } = ctx;
    // MCP servers are reached like every other outbound call: private addresses only when allowed.
    const mcp: McpConnectorOptions = {
      http: createOutboundHttp({
        allowHosts: config.OUTBOUND_ALLOW_HOSTS.split(',')
          .map((h) => h.trim())
          .filter(Boolean),
        timeoutMs: config.MCP_CLIENT_TIMEOUT_MS,
        maxResponseBytes: config.MCP_CLIENT_MAX_RESPONSE_BYTES,
      }),
      box: ctx.secrets.box('agents:mcp-credentials'),
      timeoutMs: config.MCP_CLIENT_TIMEOUT_MS,
    };
    const tools: ToolDeps = {
      mcp,
      memory: null,
      archival: null,
      knowledge,
      profile: async (accountId, userId) =>
        ctx.apis.profiles ? ctx.apis.profiles.get(accountId, userId) : null,
      recommendations: async (accountId, userId, filters) => {
        const commerce = ctx.apis.commerce;
        if (!commerce) throw new Error('blend recommendations are not enabled on this server');
        return commerce.recommendationsFor(accountId, userId, filters);
      },
      runWorkflow: async (accountId, workflowId, input) => {
        const workflows = ctx.apis.workflows;
        if (!workflows) throw new Error('the workflow service is not enabled on this server');
        const { executionId, response } = await workflows.direct.run({
          accountId,
          workflowId,
          mode: 'agent',
          body: input,
          timeoutMs: ctx.config.WEBHOOK_RESPONSE_TIMEOUT_MS,
        });
        if (response.kind === 'error')
          throw new AppError(response.code, `${response.message} (execution ${executionId})`);
        return response.body;
      },
    };
    const memory = new MemoryService(new MemoryStore(ctx.db), ctx.clock);
    tools.memory = memory;
    const archival = archivalMemory(ctx);
    tools.archival = archival;
    const agents = new AgentService(store, lookups, ctx.clock, new McpToolSaver(mcp));
    const conversations = new ConversationService(store, agents, ctx.clock);
    const runnerDeps = {
      gateway: llm.gateway,
      tools,
      callsTools: (accountId: string, name: string) =>
        llm.registry.get(name, accountId)?.provider !== 'builtin',
      inputs: (accountId: string, name: string) => llm.registry.get(name, accountId)?.inputs ?? ['text'],
    };
    const messenger = new AgentMessenger(
      agents,
      conversations,
      store,
      memory,
      runnerDeps,
      ctx.config.AGENT_HISTORY_MESSAGES,
      ctx.clock,
      (err) => ctx.log.error({ err }, 'agent turn failed'),
      ctx.config.AGENT_APPROVAL_TIMEOUT_SECONDS,
    );
    await startBackgroundRuns(ctx, store, messenger);
    const responses = new ResponsesService(store, runnerDeps, ctx.clock);
    internals.set(ctx, { agents, conversations, messenger, responses, memory, archival });
    ctx.apis.agents = {
      agents,
      messaging: messenger,
      welcome: (accountId, userId, displayName) => conversations.welcome(accountId, userId, displayName),
    };
  },

  async routes(app, ctx) {
    const deps = internals.get(ctx);
    if (!deps) throw new Error('agents module not initialised');
    agentRoutes(app, deps);
    memoryRoutes(app, deps.agents, deps.conversations, deps.memory, deps.archival);
    responsesRoutes(app, deps.responses);
    await agentSocketRoutes(app, ctx, deps.messenger);
  },
};

/**
 * Archival memory on the knowledge base (null without the documents module). Its embeddings are
 * charged to the key that inserts or searches (a turn's: the key that sent the message), else to the
 * account alone.
 */
function archivalMemory(ctx: AppContext): ArchivalMemory | null {
  const documents = ctx.apis.documents;
  if (!documents) return null;
  const payerPrincipal = async (payer: { accountId: string; keyId: string | null }): Promise<Principal> =>
    payer.keyId && ctx.apis.auth
      ? ctx.apis.auth.keyPrincipal(payer.keyId)
      : accountPrincipal(payer.accountId);
  return new ArchivalMemory(
    ctx.db,
    {
      ingest: async (payer, input) => {
        const { document } = await documents.ingest(await payerPrincipal(payer), input);
        return { documentId: document.documentId };
      },
      query: (accountId, query) => documents.knowledge.query(accountId, query),
      deleteDocument: (accountId, documentId) => documents.documents.delete(accountId, documentId),
    },
    ctx.clock,
  );
}

/**
 * Background runs: their queue (`jobs.agentRun`), its worker where this process runs jobs, and the
 * runs a stop left unfinished queued again.
 */
async function startBackgroundRuns(ctx: AppContext, store: AgentStore, messenger: AgentMessenger) {
  const { config, log } = ctx;
  const queue = await createQueue(jobs.agentRun, {
    redisUrl: config.REDIS_URL,
    prefix: config.QUEUE_PREFIX,
    stallSeconds: config.QUEUE_STALL_SECONDS,
    onError: (err, jobId) => log.error({ err, jobId }, 'agent run job failed'),
    observer: ctx.jobEvents?.observe,
  });
  const enqueue = (runId: string, accountId: string) => queue.add(runId, { runId, accountId });
  messenger.enqueueRun = enqueue;
  ctx.onClose(() => queue.close());
  if (!config.WORKFLOW_WORKER) return;
  const runs = new BackgroundRuns({
    store,
    messenger,
    clock: ctx.clock,
    principalOf: (stored) => principalOf(ctx, stored),
    onUnexpected: (err) => log.error({ err }, 'background agent run failed'),
  });
  queue.work((job, _id, run) => runs.run(job.runId, job.accountId, run.signal), config.AGENT_RUN_CONCURRENCY);
  // Approvals past their time are rejected and their runs continue here (the deadline is on the row:
  // a restart finds what expired while it was down at its first sweep).
  let sweeping = false;
  const sweep = () => {
    if (sweeping) return;
    sweeping = true;
    messenger
      .expireApprovals(enqueue)
      .catch((err: unknown) => log.error({ err }, 'agent approval timeout sweep failed'))
      .finally(() => {
        sweeping = false;
      });
  };
  const sweeper = setInterval(sweep, config.AGENT_APPROVAL_SWEEP_MS);
  sweeper.unref();
  ctx.onClose(() => clearInterval(sweeper));
  sweep();
  void runs
    .recover(enqueue)
    .then((n) => n > 0 && log.info({ requeued: n }, 'background agent runs recovered'))
    .catch((err: unknown) => log.error({ err }, 'background agent run recovery failed'));
}

/** A run's principal now: a key's (or a token's key's) as it stands, else as stored (a session). */
async function principalOf(ctx: AppContext, stored: RunPrincipal): Promise<Principal> {
  const auth = ctx.apis.auth;
  if (stored.keyId && auth) {
    const key = await auth.keyPrincipal(stored.keyId);
    if (key.accountId !== stored.accountId)
      throw new AppError('FORBIDDEN', 'The key moved to another account');
    return stored.kind === 'customer_token'
      ? { ...key, kind: 'customer_token', customerId: stored.customerId, scopes: stored.scopes }
      : key;
  }
  // A member's run continues only while the member is still there with the role it started under:
  // a paused run must not outlive a removal or a demotion.
  if (stored.memberId) {
    const role = ctx.apis.portal
      ? await ctx.apis.portal.members.currentRole(stored.accountId, stored.memberId)
      : null;
    if (!role) throw new AppError('FORBIDDEN', 'The member who started this run was removed');
    if (role !== stored.role)
      throw new AppError('FORBIDDEN', "The member who started this run no longer has that run's role");
  }
  return {
    kind: stored.kind,
    accountId: stored.accountId,
    keyId: stored.keyId,
    keyType: null,
    services: stored.services,
    role: stored.role,
    scopes: stored.scopes,
    customerId: stored.customerId,
    dailyQuota: null,
    models: stored.models,
    dailyTokenBudget: null,
    ipAllowed: null,
    ...(stored.memberId ? { memberId: stored.memberId } : {}),
  };
}
