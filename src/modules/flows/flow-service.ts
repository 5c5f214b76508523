import { LRUCache } from 'lru-cache';
import { assertMayRunWorkflows } from '../../core/auth/ceiling.js';
import { mayUseModel, type Principal } from '../../core/auth/principal.js';
import type { Clock } from '../../core/clock.js';
import { AppError, notFound, validationError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import {
  type ChainStep,
  DEFAULT_TEMPLATES,
  definitionOf,
  type FlowDefinition,
  type FlowiseSource,
  type Problem,
} from './definition.js';
import type { FlowRow, FlowStore } from './flow-store.js';
import { convertCanvas } from './flowise/convert.js';
import { parseFlowData } from './flowise/flow-data.js';
import type { DefinitionLookups } from './lookups.js';
import type { FlowBodyT } from './schemas.js';

/** What saving a flow checks against other modules. */
export type FlowLookups = DefinitionLookups;

/** Flows an account may hold: the list is answered whole, as Flowise does, so it must stay small. */
const MAX_FLOWS_PER_ACCOUNT = 1_000;

interface LoadedFlow {
  row: FlowRow;
  definition: FlowDefinition;
}

function flowView(row: FlowRow, def: FlowDefinition) {
  return {
    id: row.id,
    name: def.name,
    kind: def.kind,
    model: def.model,
    systemPrompt: def.systemPrompt,
    promptTemplate: def.promptTemplate ?? DEFAULT_TEMPLATES[def.kind],
    topics: def.topics,
    topK: def.topK,
    minScore: def.minScore,
    temperature: def.temperature,
    maxTokens: def.maxTokens,
    memory: def.memory,
    workflowId: def.workflowId,
    overridableFields: def.overridableFields,
    isStreaming: def.isStreaming,
    rateLimit: def.rateLimit,
    flowData: def.flowise?.flowData ?? null,
    type: 'CHATFLOW' as const,
    createdDate: row.created_at,
    updatedDate: row.updated_at,
  };
}

/** Flows: stored, validated definitions; a flow that cannot run is refused when saved. */
export class FlowService {
  constructor(
    private readonly store: FlowStore,
    private readonly lookups: FlowLookups,
    private readonly clock: Clock,
  ) {}

  async create(principal: Principal, body: FlowBodyT) {
    const id = newId('flow');
    const { fields, flowise } = fromCanvas(body, id);
    const { definition, problems } = definitionOf(fields, null);
    definition.flowise = flowise;
    await this.check(principal, definition, problems);
    const now = this.clock.now().toISOString();
    const row: FlowRow = {
      id,
      account_id: principal.accountId,
      name: definition.name,
      kind: definition.kind,
      definition: JSON.stringify(definition),
      created_at: now,
      updated_at: now,
    };
    // Counted and inserted in one locked step: creates racing at the bound cannot all pass it.
    if (!(await this.store.insertUnder(row, MAX_FLOWS_PER_ACCOUNT)))
      throw new AppError('CONFLICT', `An account holds at most ${MAX_FLOWS_PER_ACCOUNT} flows`, {
        limit: MAX_FLOWS_PER_ACCOUNT,
      });
    return flowView(row, definition);
  }

  async list(accountId: string) {
    const rows = await this.store.list(accountId, MAX_FLOWS_PER_ACCOUNT);
    // Without the canvases (GET by id answers one): the list stays small however large they are.
    return rows.map((row) => {
      const { flowData: _canvas, ...view } = flowView(row, parse(row));
      return view;
    });
  }

  async load(accountId: string, id: string): Promise<LoadedFlow> {
    const row = await this.store.get(accountId, id);
    if (!row) throw notFound('FLOW_NOT_FOUND', 'Flow', id);
    return { row, definition: parse(row) };
  }

  async get(accountId: string, id: string) {
    const { row, definition } = await this.load(accountId, id);
    return flowView(row, definition);
  }

  async replace(principal: Principal, id: string, body: FlowBodyT) {
    const { row, definition: previous } = await this.load(principal.accountId, id);
    const { fields, flowise } = fromCanvas(body, id);
    const { definition, problems } = definitionOf(fields, previous);
    definition.flowise = flowise ?? previous.flowise ?? null;
    await this.check(principal, definition, problems);
    const updated = {
      name: definition.name,
      kind: definition.kind,
      definition: JSON.stringify(definition),
      updated_at: this.clock.now().toISOString(),
    };
    if (!(await this.store.update(principal.accountId, id, updated)))
      throw notFound('FLOW_NOT_FOUND', 'Flow', id);
    return flowView({ ...row, ...updated }, definition);
  }

  async delete(accountId: string, id: string): Promise<void> {
    if (!(await this.store.delete(accountId, id))) throw notFound('FLOW_NOT_FOUND', 'Flow', id);
  }

  /** Whether a flow streams, for the keyless probe the Flowise SDK sends first; nothing else leaks. */
  async isStreaming(id: string): Promise<boolean> {
    const row = await this.store.getAnyAccount(id);
    if (!row) throw notFound('FLOW_NOT_FOUND', 'Flow', id);
    return parse(row).isStreaming;
  }

  /** The checks that need other modules; a key limited to some models may not build on others. */
  private async check(principal: Principal, def: FlowDefinition, problems: Problem[]): Promise<void> {
    const found = [...problems];
    if (def.kind !== 'workflow' && def.model) {
      const problem = this.lookups.chatModelProblem(principal.accountId, def.model);
      if (problem) found.push({ field: 'model', message: problem });
    }
    // The canvas's other chat models (chained LLM chains, chain tools) are checked as the flow's own.
    for (const step of planSteps(def)) {
      const problem = this.lookups.chatModelProblem(principal.accountId, step.model);
      if (problem) found.push({ field: `flowData.${step.id}.model`, message: problem });
      else if (!mayUseModel(principal, step.model))
        throw new AppError('FORBIDDEN', `This key may not use model "${step.model}"`, { model: step.model });
    }
    // A chatflow's vector store is its topic: filled by its vector upsert, so it may be empty at save.
    if (def.kind === 'rag' && def.topics.length > 0 && !def.flowise) {
      const existing = await this.lookups.topics(principal.accountId);
      for (const topic of def.topics)
        if (!existing.has(topic))
          found.push({ field: 'topics', message: `topic '${topic}' has no documents in this account` });
    }
    if (def.kind === 'workflow' && def.workflowId) {
      const problem = await this.lookups.workflowProblem(principal.accountId, def.workflowId);
      if (problem) found.push({ field: 'workflowId', message: problem });
    }
    if (found.length > 0) throw validationError('Invalid flow', found);
    if (def.kind !== 'workflow' && def.model && !mayUseModel(principal, def.model))
      throw new AppError('FORBIDDEN', `This key may not use model "${def.model}"`, { model: def.model });
    // A workflow flow runs its workflow for every caller of the flow: only someone who may run it
    // directly may save one (and every caller's webhook authentication is that saver's decision).
    if (def.kind === 'workflow' && def.workflowId) assertMayRunWorkflows(principal, [def.workflowId]);
  }
}

/**
 * The definition fields a body sets: Flowise's flowData converted (the body's own fields over it),
 * and the canvas kept for export. An in-memory vector store is the flow's own topic.
 */
function fromCanvas(body: FlowBodyT, flowId: string): { fields: FlowBodyT; flowise: FlowiseSource | null } {
  if (body.flowData === undefined || body.flowData === null) return { fields: body, flowise: null };
  const canvas = parseFlowData(body.flowData);
  const { fields: converted, plan } = convertCanvas(canvas, () => `flowise-${flowId}`);
  const own = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as FlowBodyT;
  return {
    fields: { ...converted, ...own },
    flowise: {
      flowData: body.flowData,
      nodeIds: [...canvas.nodes.keys()],
      ...(Object.keys(plan).length > 0 ? { plan } : {}),
    },
  };
}

/** The chains of a canvas answered besides its ending one: prompt-chaining steps and chain tools. */
function planSteps(def: FlowDefinition): ChainStep[] {
  const plan = def.flowise?.plan;
  if (!plan) return [];
  const tools = plan.agent?.tools ?? [];
  return [...(plan.steps ?? []), ...tools.flatMap((t) => (t.type === 'chain' ? [t.step] : []))];
}

/**
 * Parsed definitions by row and version: a chatflow's definition holds its canvas (up to megabytes of
 * JSON), read again on every prediction and list otherwise. A changed row has a new `updated_at`.
 * Callers do not change what they get (overrides make a copy).
 */
const parsed = new LRUCache<string, FlowDefinition>({
  max: 5_000,
  // Bounded by the text parsed (canvases of up to 2 MB each).
  maxSize: 64 * 1024 * 1024,
  sizeCalculation: (_def, key) => Math.max(1, Number(key.slice(key.lastIndexOf('\u0000') + 1))),
});

function parse(row: FlowRow): FlowDefinition {
  const key = `${row.id}\u0000${row.updated_at}\u0000${row.definition.length}`;
  let def = parsed.get(key);
  if (!def) {
    def = JSON.parse(row.definition) as FlowDefinition;
    parsed.set(key, def);
  }
  return def;
}
