import type { AppContext, PlatformModule } from '../../core/context.js';
import { AppError, isAppError } from '../../core/errors.js';
import { CallSlots } from './call-slots.js';
import { PlatformMcpServer } from './mcp-server.js';
import { mcpRoutes } from './routes.js';
import { type CatalogDeps, ToolCatalog } from './tool-catalog.js';

/** The catalog's reach into other modules, through their public APIs, each null when disabled. */
function catalogDeps(ctx: AppContext): CatalogDeps {
  const { apis, services, config } = ctx;
  const workflowsApi = services.has('workflow') ? apis.workflows : undefined;
  const documentsApi = services.has('docproc') || services.has('agent') ? apis.documents : undefined;
  const agentsApi = services.has('agent') ? apis.agents : undefined;
  return {
    timeoutMs: config.MCP_TOOL_TIMEOUT_MS,
    workflows: workflowsApi
      ? {
          list: (accountId, limit) => workflowsApi.workflows.mcpTools(accountId, limit),
          run: async (accountId, workflowId, body, timeoutMs) => {
            const { executionId, response } = await workflowsApi.direct.run({
              accountId,
              workflowId,
              mode: 'mcp',
              body,
              timeoutMs,
            });
            if (response.kind === 'error')
              throw new AppError(response.code, `${response.message} (execution ${executionId})`);
            return response.body;
          },
        }
      : null,
    knowledge: documentsApi
      ? {
          search: async (principal, input) => {
            const { results } = await documentsApi.knowledge.query(principal.accountId, {
              payerKeyId: principal.keyId,
              query: input.query,
              topK: input.topK,
              topics: input.topics,
              mode: 'hybrid',
            });
            return {
              results: results.map((r) => ({
                documentId: r.documentId,
                title: r.title ?? null,
                topic: r.topic,
                pageNumber: r.pageNumber,
                score: r.score,
                text: r.text,
              })),
            };
          },
        }
      : null,
    agents: agentsApi
      ? {
          list: async (accountId, limit) => {
            const page = await agentsApi.agents.list(accountId, { limit: String(limit) });
            return page.data.map((a) => ({
              id: a.id as string,
              name: a.name as string,
              instructions: a.instructions ?? '',
            }));
          },
          exists: async (accountId, agentId) => {
            try {
              await agentsApi.agents.load(accountId, agentId);
              return true;
            } catch (error) {
              if (isAppError(error) && error.code === 'AGENT_NOT_FOUND') return false;
              throw error;
            }
          },
          ask: async (principal, agentId, input, signal) => {
            const events = await agentsApi.messaging.send(
              principal,
              agentId,
              {
                content: input.question,
                ...(input.conversationId ? { conversationId: input.conversationId } : {}),
              },
              signal,
            );
            for await (const event of events) {
              if (event.type === 'error') throw new AppError(event.code as never, event.message);
              if (event.type === 'message.completed')
                return {
                  answer: event.message.content,
                  conversationId: event.conversationId,
                  sources: event.sources.map((s) => ({ documentId: s.documentId, title: s.title })),
                };
            }
            throw new Error('the agent ended its turn without an answer');
          },
        }
      : null,
  };
}

const internals = new WeakMap<AppContext, { server: PlatformMcpServer; slots: CallSlots }>();

/**
 * The platform as an MCP server at `/mcp` (docs/decisions.md, MCP both ways). Agents' MCP client
 * lives with the agents (modules/agents/mcp-*.ts).
 */
export const mcpModule: PlatformModule = {
  name: 'mcp',
  services: ['workflow', 'docproc', 'agent'],
  migrations: {},

  init(ctx) {
    const server = new PlatformMcpServer({
      catalog: new ToolCatalog(catalogDeps(ctx)),
      toolTimeoutMs: ctx.config.MCP_TOOL_TIMEOUT_MS,
      maxResultChars: ctx.config.MCP_MAX_RESULT_CHARS,
      onUnexpected: (err) => ctx.log.error({ err }, 'MCP tool call failed unexpectedly'),
    });
    internals.set(ctx, { server, slots: new CallSlots(ctx.config.MCP_CALLS_PER_ACCOUNT) });
  },

  routes(app, ctx) {
    const deps = internals.get(ctx);
    if (!deps) throw new Error('mcp module not initialised');
    mcpRoutes(app, { ...deps, bodyLimit: ctx.config.MCP_BODY_LIMIT_BYTES });
  },
};
