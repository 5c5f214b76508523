import type { KnowledgeSearch } from '../documents/index.js';
import type { SourceView } from './agent-events.js';
import type { ArchivalMemory } from './archival-memory.js';
import type { McpConnectorOptions } from './mcp-client.js';
import type { MemoryService } from './memory-service.js';

/** What the tools reach in other modules, each possibly disabled on this server. */
export interface ToolDeps {
  knowledge: KnowledgeSearch | null;
  /** The user's profile, or null when there is none. */
  profile(accountId: string, userId: string): Promise<unknown | null>;
  recommendations(
    accountId: string,
    userId: string,
    filters: { category?: string; mood?: string; occasion?: string },
  ): Promise<unknown>;
  /** Runs a workflow (execution mode `agent`) and answers its output, or throws its failure. */
  runWorkflow(accountId: string, workflowId: string, input: Record<string, unknown>): Promise<unknown>;
  /** How agents reach MCP servers (outbound guard, credential box, time bound); null: not at all. */
  mcp: McpConnectorOptions | null;
  /** The agent's memory blocks, edited by its memory tools. */
  memory: Pick<MemoryService, 'agentEdit'> | null;
  /** The agent's archival memory (on the knowledge base); null when the knowledge base is off. */
  archival: Pick<ArchivalMemory, 'insert' | 'search'> | null;
}

/** Calls a tool of an MCP server of the agent (`mcp:<label>`), on the turn's connection. */
export interface McpCalls {
  call(server: string, tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
}

/** Whose turn it is: the tools act for this account and the conversation's user. */
interface ToolContext {
  accountId: string;
  /** The key that sent the message: what the tools spend of the models is charged to it. */
  payerKeyId: string | null;
  userId: string | null;
  topics: string[];
  /** The agent and conversation whose memory blocks the memory tools edit. */
  agentId?: string;
  conversationId?: string | null;
  /** The turn's MCP connections, and its signal (a stopped turn stops its calls). */
  mcp?: McpCalls;
  signal?: AbortSignal;
}

/** A tool's answer, and the passages it found (they join the message's sources). */
interface ToolOutcome {
  output: unknown;
  sources: SourceView[];
}

/** The query's embedding is charged to `payerKeyId` (the key of whoever sent the message). */
export async function searchKnowledge(
  knowledge: KnowledgeSearch,
  accountId: string,
  payerKeyId: string | null,
  topics: string[],
  query: string,
  topK: number,
): Promise<SourceView[]> {
  const { results } = await knowledge.query(accountId, {
    payerKeyId,
    query: query.slice(0, 4_000),
    topK,
    topics,
    mode: 'hybrid',
  });
  return results.map((r) => ({
    documentId: r.documentId,
    title: r.title ?? null,
    topic: r.topic,
    pageNumber: r.pageNumber,
    score: r.score,
    text: r.text,
  }));
}

/** Runs a validated tool call. Failures are thrown; the loop reports them to the model as the result. */
export async function runTool(
  deps: ToolDeps,
  name: string,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<ToolOutcome> {
  switch (name) {
    case 'knowledge_search': {
      if (!deps.knowledge) throw new Error('the knowledge base is not enabled on this server');
      const topK = typeof args.topK === 'number' ? args.topK : 4;
      const sources = await searchKnowledge(
        deps.knowledge,
        context.accountId,
        context.payerKeyId,
        context.topics,
        String(args.query),
        topK,
      );
      return {
        output: {
          results: sources.map((s) => ({
            title: s.title,
            documentId: s.documentId,
            score: s.score,
            text: s.text,
          })),
        },
        sources,
      };
    }
    case 'user_profile': {
      if (!context.userId)
        return { output: { found: false, reason: 'this conversation has no user' }, sources: [] };
      const profile = await deps.profile(context.accountId, context.userId);
      return { output: profile ? { found: true, profile } : { found: false }, sources: [] };
    }
    case 'blend_recommendations': {
      if (!context.userId) throw new Error('this conversation has no user to recommend for');
      const filters: { category?: string; mood?: string; occasion?: string } = {};
      for (const key of ['category', 'mood', 'occasion'] as const)
        if (typeof args[key] === 'string') filters[key] = args[key] as string;
      const found = await deps.recommendations(context.accountId, context.userId, filters);
      return { output: Array.isArray(found) ? { recommendations: found } : found, sources: [] };
    }
    case 'memory_append':
    case 'memory_replace': {
      if (!deps.memory || !context.agentId) throw new Error('this turn has no memory blocks');
      const label = String(args.label);
      const edited = await deps.memory.agentEdit(
        context.accountId,
        context.agentId,
        context.conversationId ?? null,
        name === 'memory_append'
          ? { op: 'append', label, text: String(args.content) }
          : { op: 'replace', label, old: String(args.old_content), text: String(args.new_content) },
        context.userId ?? null,
      );
      return { output: { ok: true, block: edited }, sources: [] };
    }
    case 'archival_memory_insert': {
      if (!deps.archival || !context.agentId)
        throw new Error('archival memory is not enabled on this server');
      const scope = typeof args.scope === 'string' ? args.scope : context.userId ? 'user' : 'agent';
      if (scope === 'user' && !context.userId)
        throw new Error("this conversation has no user: use scope 'agent'");
      // One user's turn must not write what every other user's turns read back (a prompt injection
      // would outlive the conversation): agent-wide passages come through the API only.
      if (scope === 'agent' && context.userId)
        throw new Error("this conversation has a user: use scope 'user' or 'conversation'");
      if (scope === 'conversation' && !context.conversationId)
        throw new Error("this turn has no conversation: use scope 'agent'");
      const { created, passage } = await deps.archival.insert(
        { accountId: context.accountId, keyId: context.payerKeyId },
        context.agentId,
        scope === 'user'
          ? { userId: context.userId }
          : scope === 'conversation'
            ? { conversationId: context.conversationId ?? null }
            : {},
        String(args.content),
        'agent',
      );
      return { output: { ok: true, id: passage.id, scope, alreadyStored: !created }, sources: [] };
    }
    case 'archival_memory_search': {
      if (!deps.archival || !context.agentId)
        throw new Error('archival memory is not enabled on this server');
      const found = await deps.archival.search(
        { accountId: context.accountId, keyId: context.payerKeyId },
        context.agentId,
        { conversationId: context.conversationId ?? null, userId: context.userId },
        String(args.query),
        typeof args.topK === 'number' ? args.topK : 5,
      );
      return {
        output: {
          results: found.map((p) => ({ text: p.text, storedAt: p.createdAt, score: p.score })),
        },
        sources: [],
      };
    }
    default: {
      if (name.startsWith('mcp:')) {
        const slash = name.indexOf('/');
        if (!context.mcp || slash < 0) throw new Error(`unknown tool '${name}'`);
        const output = await context.mcp.call(
          name.slice(0, slash),
          name.slice(slash + 1),
          args,
          context.signal ?? new AbortController().signal,
        );
        return { output, sources: [] };
      }
      if (!name.startsWith('workflow:')) throw new Error(`unknown tool '${name}'`);
      const output = await deps.runWorkflow(context.accountId, name.slice('workflow:'.length), args);
      return { output, sources: [] };
    }
  }
}
