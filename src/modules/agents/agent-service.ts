import { assertMayRunWorkflows } from '../../core/auth/ceiling.js';
import { mayUseModel, type Principal } from '../../core/auth/principal.js';
import type { Clock } from '../../core/clock.js';
import { runList } from '../../core/db/list.js';
import { AppError, notFound, validationError } from '../../core/errors.js';
import type { ListSpec } from '../../core/http/list-query.js';
import { parseListQuery } from '../../core/http/list-query.js';
import { newId } from '../../core/ids.js';
import type { DefinitionLookups } from '../flows/index.js';
import type { AgentRow, AgentStore } from './agent-store.js';
import type { McpToolSaver } from './mcp-save.js';
import { mcpToolView } from './mcp-save.js';
import type { AgentCreateBodyT, AgentPatchBodyT } from './schemas.js';
import {
  BUILTIN_TOOLS,
  clientToolProblem,
  isClientTool,
  isMcpTool,
  schemaProblem,
  type ToolDefinition,
  toolName,
} from './tool-specs.js';

export interface AgentDefinition {
  name: string;
  instructions: string;
  model: string;
  knowledgeTopics: string[];
  tools: ToolDefinition[];
  temperature: number | null;
  maxToolCalls: number;
  /** Tools whose calls wait for approval (absent on agents saved before approvals existed). */
  requiresApproval?: string[];
  /** Seconds a call waits for approval (null or absent: the server's default), and per tool. */
  approvalTimeoutSeconds?: number | null;
  approvalTimeouts?: Record<string, number>;
}

/** What saving an agent checks against other modules (the same as a flow's). */
type AgentLookups = DefinitionLookups;

export const LIST_SPEC: ListSpec = {
  columns: { name: 'name', createdAt: 'created_at' },
  sortable: ['id', 'createdAt', 'name'],
  filters: { name: 'string' },
  projectable: [],
  defaultSort: 'id',
  defaultOrder: 'desc',
  defaultLimit: 50,
  maxLimit: 200,
};

function agentView(row: AgentRow, def: AgentDefinition = parseAgent(row)) {
  return {
    id: row.id,
    name: def.name,
    instructions: def.instructions,
    model: def.model,
    knowledgeTopics: def.knowledgeTopics,
    tools: def.tools.map((t) => (isMcpTool(t) ? mcpToolView(t) : t)),
    temperature: def.temperature,
    maxToolCalls: def.maxToolCalls,
    requiresApproval: def.requiresApproval ?? [],
    approvalTimeoutSeconds: def.approvalTimeoutSeconds ?? null,
    approvalTimeouts: def.approvalTimeouts ?? {},
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function parseAgent(row: AgentRow): AgentDefinition {
  return JSON.parse(row.definition) as AgentDefinition;
}

/** Agents: stored, validated definitions; one that cannot run is refused when saved. */
export class AgentService {
  constructor(
    private readonly store: AgentStore,
    private readonly lookups: AgentLookups,
    private readonly clock: Clock,
    private readonly mcp: McpToolSaver,
  ) {}

  async create(principal: Principal, body: AgentCreateBodyT) {
    const def: AgentDefinition = {
      name: body.name,
      instructions: body.instructions ?? '',
      model: body.model,
      knowledgeTopics: [...new Set(body.knowledgeTopics ?? [])],
      tools: (body.tools ?? []) as ToolDefinition[],
      temperature: body.temperature ?? null,
      maxToolCalls: body.maxToolCalls ?? 4,
      requiresApproval: [...new Set(body.requiresApproval ?? [])],
      approvalTimeoutSeconds: body.approvalTimeoutSeconds ?? null,
      approvalTimeouts: body.approvalTimeouts ?? {},
    };
    await this.check(principal, def, []);
    const now = this.clock.now().toISOString();
    const row: AgentRow = {
      id: newId('agt'),
      account_id: principal.accountId,
      name: def.name,
      definition: JSON.stringify(def),
      created_at: now,
      updated_at: now,
    };
    await this.store.insertAgent(row);
    return agentView(row, def);
  }

  async list(accountId: string, rawQuery: Record<string, unknown>) {
    const query = parseListQuery(rawQuery, LIST_SPEC);
    return runList(this.store.agentsQuery(accountId), query, LIST_SPEC, (row) => agentView(row));
  }

  async load(accountId: string, id: string): Promise<{ row: AgentRow; definition: AgentDefinition }> {
    const row = await this.store.getAgent(accountId, id);
    if (!row) throw notFound('AGENT_NOT_FOUND', 'Agent', id);
    return { row, definition: parseAgent(row) };
  }

  async get(accountId: string, id: string) {
    const { row, definition } = await this.load(accountId, id);
    return agentView(row, definition);
  }

  async patch(principal: Principal, id: string, body: AgentPatchBodyT) {
    const { row, definition: previous } = await this.load(principal.accountId, id);
    const def: AgentDefinition = {
      ...previous,
      ...Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)),
    } as AgentDefinition;
    def.knowledgeTopics = [...new Set(def.knowledgeTopics)];
    // Tools re-sent are saved again (MCP servers listed again); tools not in the body stay as they are.
    await this.check(principal, def, body.tools !== undefined ? previous.tools : null);
    const values = {
      name: def.name,
      definition: JSON.stringify(def),
      updated_at: this.clock.now().toISOString(),
    };
    if (!(await this.store.updateAgent(principal.accountId, id, values)))
      throw notFound('AGENT_NOT_FOUND', 'Agent', id);
    return agentView({ ...row, ...values }, def);
  }

  async delete(accountId: string, id: string): Promise<void> {
    if (!(await this.store.deleteAgent(accountId, id))) throw notFound('AGENT_NOT_FOUND', 'Agent', id);
  }

  /**
   * Refuses a definition that cannot run. `previousTools` non-null: the tools come from the request,
   * so MCP servers are listed and credentials sealed (a value not re-sent is kept from these).
   */
  private async check(
    principal: Principal,
    def: AgentDefinition,
    previousTools: readonly ToolDefinition[] | null,
  ): Promise<void> {
    const problems: Array<{ field: string; message: string }> = [];
    const modelProblem = this.lookups.chatModelProblem(principal.accountId, def.model);
    if (modelProblem) problems.push({ field: 'model', message: modelProblem });
    if (def.knowledgeTopics.length > 0) {
      const existing = await this.lookups.topics(principal.accountId);
      for (const topic of def.knowledgeTopics)
        if (!existing.has(topic))
          problems.push({
            field: 'knowledgeTopics',
            message: `topic '${topic}' has no documents in this account`,
          });
    }
    const seen = new Set<string>();
    for (const [i, tool] of def.tools.entries()) {
      const name = toolName(tool);
      const field = `tools[${i}]`;
      if (seen.has(name)) problems.push({ field, message: `'${name}' is listed twice` });
      seen.add(name);
      if (isClientTool(tool)) {
        const problem = clientToolProblem(tool);
        if (problem) problems.push({ field, message: problem });
      } else if (isMcpTool(tool) || (typeof tool === 'object' && 'type' in tool)) {
        // Checked when listed (below).
      } else if (name.startsWith('workflow:')) {
        const workflowId = name.slice('workflow:'.length);
        const problem = workflowId
          ? await this.lookups.workflowProblem(principal.accountId, workflowId)
          : 'names no workflow';
        if (problem) problems.push({ field, message: problem });
        if (typeof tool !== 'string' && tool.parameters) {
          const bad = schemaProblem(tool.parameters);
          if (bad) problems.push({ field: `${field}.parameters`, message: bad });
        }
      } else if (!BUILTIN_TOOLS.includes(name as (typeof BUILTIN_TOOLS)[number])) {
        problems.push({
          field,
          message: `unknown tool '${name}': ${BUILTIN_TOOLS.join(', ')} or workflow:<id>`,
        });
      }
    }
    for (const [i, name] of (def.requiresApproval ?? []).entries()) {
      const server = /^(mcp:[^/]+)\//.exec(name)?.[1];
      const listed = def.tools.some((t) => !isClientTool(t) && toolName(t) === (server ?? name));
      if (!listed)
        problems.push({
          field: `requiresApproval[${i}]`,
          message: `'${name}' is not one of the agent's server tools`,
        });
    }
    const approving = new Set(def.requiresApproval ?? []);
    for (const name of Object.keys(def.approvalTimeouts ?? {}))
      if (!approving.has(name))
        problems.push({
          field: `approvalTimeouts.${name}`,
          message: `'${name}' is not one of requiresApproval`,
        });
    if (seen.has('knowledge_search') && def.knowledgeTopics.length === 0)
      problems.push({ field: 'tools', message: 'knowledge_search needs knowledgeTopics to search' });
    // Servers are reached only for a definition otherwise valid.
    if (problems.length === 0 && previousTools !== null)
      def.tools = await this.mcp.prepare(def.tools, previousTools, problems);
    if (problems.length > 0) throw validationError('Invalid agent', problems);
    // An agent acts with the rights of whoever saves it, for whoever talks to it: it may use only
    // the models its saver may, and run only workflows its saver may run directly.
    if (!mayUseModel(principal, def.model))
      throw new AppError('FORBIDDEN', `This key may not use model "${def.model}"`, { model: def.model });
    assertMayRunWorkflows(
      principal,
      def.tools.map(toolName).flatMap((name) => (name.startsWith('workflow:') ? [name.slice(9)] : [])),
    );
  }
}
