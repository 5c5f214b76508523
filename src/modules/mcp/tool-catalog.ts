import { hasScope, type Principal } from '../../core/auth/principal.js';

/** A tool the platform's MCP server offers one caller. */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  /** Runs the tool; thrown errors become the tool's error result. */
  run(args: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
}

/** What the catalog reaches in other modules, each null when its service is off on this server. */
export interface CatalogDeps {
  workflows: {
    /** The account's workflows marked as MCP tools (at most `limit`). */
    list(
      accountId: string,
      limit: number,
    ): Promise<Array<{ id: string; name: string; description: string | null }>>;
    /** Runs one the way a direct run does and answers its output (throws its failure). */
    run(
      accountId: string,
      workflowId: string,
      body: Record<string, unknown>,
      timeoutMs: number,
    ): Promise<unknown>;
  } | null;
  knowledge: {
    search(principal: Principal, input: { query: string; topK: number; topics: string[] }): Promise<unknown>;
  } | null;
  agents: {
    list(
      accountId: string,
      limit: number,
    ): Promise<Array<{ id: string; name: string; instructions: string }>>;
    exists(accountId: string, agentId: string): Promise<boolean>;
    ask(
      principal: Principal,
      agentId: string,
      input: { question: string; conversationId?: string },
      signal: AbortSignal,
    ): Promise<unknown>;
  } | null;
  /** A tool call's time bound (a workflow run waits at most this long). */
  timeoutMs: number;
}

/** Workflows and agents listed at most (each); tools/list stays one bounded answer. */
const MAX_LISTED = 200;

const WORKFLOW_PREFIX = 'workflow_';
const AGENT_PREFIX = 'agent_';

const WORKFLOW_INPUT = {
  type: 'object',
  additionalProperties: true,
  description: 'The JSON body the workflow receives (its webhook node reads it as $json.body)',
} as const;

const KNOWLEDGE_INPUT = {
  type: 'object',
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 4000, description: 'What to look for' },
    topK: { type: 'integer', minimum: 1, maximum: 20, description: 'How many passages (default 5)' },
    topics: {
      type: 'array',
      items: { type: 'string', minLength: 1, maxLength: 200 },
      maxItems: 10,
      description: 'Topics to search (default: all of the account)',
    },
  },
  required: ['query'],
  additionalProperties: false,
} as const;

const AGENT_INPUT = {
  type: 'object',
  properties: {
    question: { type: 'string', minLength: 1, maxLength: 32000, description: 'What to ask the agent' },
    conversationId: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description: 'Continue this conversation (from an earlier answer); default: a new one',
    },
  },
  required: ['question'],
  additionalProperties: false,
} as const;

/** Running a workflow needs what running it directly needs (core/auth/ceiling.ts). */
const mayRunWorkflows = (p: Principal) => hasScope(p, 'workflow', 'write');
/** `/api/knowledge` is read with either service's read scope (DESIGN.md). */
const maySearch = (p: Principal) => hasScope(p, 'docproc', 'read') || hasScope(p, 'agent', 'read');
/** Asking an agent is sending it a message: agent:write. */
const mayAsk = (p: Principal) => hasScope(p, 'agent', 'write');

/**
 * The tools of one caller: the account's workflows marked `availableInMCP`, the knowledge base search
 * and the account's agents, each only with the scope its own route needs. Another account's things are
 * never found: every look-up is by the caller's account.
 */
export class ToolCatalog {
  constructor(private readonly deps: CatalogDeps) {}

  async list(principal: Principal): Promise<McpTool[]> {
    const { workflows, knowledge, agents } = this.deps;
    const tools: McpTool[] = [];
    if (workflows && mayRunWorkflows(principal))
      for (const wf of await workflows.list(principal.accountId, MAX_LISTED))
        tools.push(this.workflowTool(principal, wf));
    if (knowledge && maySearch(principal)) tools.push(this.knowledgeTool(principal));
    if (agents && mayAsk(principal))
      for (const agent of await agents.list(principal.accountId, MAX_LISTED))
        tools.push(this.agentTool(principal, agent));
    return tools;
  }

  /** The tool of that name if this caller may see it, else null (unknown and forbidden look alike). */
  async find(principal: Principal, name: string): Promise<McpTool | null> {
    const { workflows, knowledge, agents } = this.deps;
    if (name === 'knowledge_search')
      return knowledge && maySearch(principal) ? this.knowledgeTool(principal) : null;
    if (name.startsWith(WORKFLOW_PREFIX)) {
      if (!workflows || !mayRunWorkflows(principal)) return null;
      const id = name.slice(WORKFLOW_PREFIX.length);
      const found = (await workflows.list(principal.accountId, MAX_LISTED)).find((wf) => wf.id === id);
      return found ? this.workflowTool(principal, found) : null;
    }
    if (name.startsWith(AGENT_PREFIX)) {
      if (!agents || !mayAsk(principal)) return null;
      const id = name.slice(AGENT_PREFIX.length);
      if (!(await agents.exists(principal.accountId, id))) return null;
      return this.agentTool(principal, { id, name: id, instructions: '' });
    }
    return null;
  }

  private workflowTool(
    principal: Principal,
    wf: { id: string; name: string; description: string | null },
  ): McpTool {
    const run = this.deps.workflows?.run;
    return {
      name: `${WORKFLOW_PREFIX}${wf.id}`,
      title: wf.name,
      description:
        wf.description ??
        `Runs the workflow "${wf.name}" with the arguments as its input; answers its output.`,
      inputSchema: WORKFLOW_INPUT,
      run: async (args) => {
        if (!run) throw new Error('the workflow service is not enabled on this server');
        return run(principal.accountId, wf.id, args, this.deps.timeoutMs);
      },
    };
  }

  private knowledgeTool(principal: Principal): McpTool {
    const knowledge = this.deps.knowledge;
    return {
      name: 'knowledge_search',
      title: 'Knowledge base search',
      description:
        "Searches the account's knowledge base (keyword and vector, fused); answers the best passages with their documents.",
      inputSchema: KNOWLEDGE_INPUT,
      run: async (args) => {
        if (!knowledge) throw new Error('the knowledge base is not enabled on this server');
        return knowledge.search(principal, {
          query: String(args.query),
          topK: typeof args.topK === 'number' ? args.topK : 5,
          topics: Array.isArray(args.topics) ? (args.topics as string[]) : [],
        });
      },
    };
  }

  private agentTool(
    principal: Principal,
    agent: { id: string; name: string; instructions: string },
  ): McpTool {
    const agents = this.deps.agents;
    const about = agent.instructions.trim().slice(0, 500);
    return {
      name: `${AGENT_PREFIX}${agent.id}`,
      title: agent.name,
      description: `Asks the agent "${agent.name}" a question; answers its reply and the conversation id.${about ? ` Its instructions: ${about}` : ''}`,
      inputSchema: AGENT_INPUT,
      run: async (args, signal) => {
        if (!agents) throw new Error('the agent service is not enabled on this server');
        const input: { question: string; conversationId?: string } = { question: String(args.question) };
        if (typeof args.conversationId === 'string') input.conversationId = args.conversationId;
        return agents.ask(principal, agent.id, input, signal);
      },
    };
  }
}
