import { randomUUID } from 'node:crypto';
import type { Principal } from '../../core/auth/principal.js';
import type { Clock } from '../../core/clock.js';
import { AppError, type ErrorCode } from '../../core/errors.js';
import { tooMany } from '../../core/http/auth-hook.js';
import { newId } from '../../core/ids.js';
import type { Limiter } from '../../core/limits/limiter.js';
import type { KnowledgeSearch } from '../documents/index.js';
import type { ChatGateway, ChatMessage, Passage } from '../llm/index.js';
import type { Json, StoredResponse } from '../workflows/index.js';
import { type FlowDefinition, templateOf } from './definition.js';
import type { FlowLookups, FlowService } from './flow-service.js';
import type { FlowMessageRow, FlowStore } from './flow-store.js';
import { flowiseOverride } from './flowise/override-config.js';
import { answerStep, moderated, type PlanDeps, runAgent, type UsedTool } from './flowise/plan-runner.js';
import { readUploads } from './flowise/uploads.js';
import { applyOverrides } from './overrides.js';
import { buildMessages, type Turn, turnsFromHistory } from './prompt.js';
import type { PredictionBodyT } from './schemas.js';

/** Runs a workflow for a flow and waits for its answer (the workflows module's direct runner). */
interface WorkflowRunner {
  run(input: {
    accountId: string;
    workflowId: string;
    mode: 'flow';
    body: Record<string, Json>;
    timeoutMs: number;
  }): Promise<{ executionId: string; response: StoredResponse }>;
}

export interface SourceDocument {
  pageContent: string;
  metadata: { documentId: string; title: string | null; pageNumber: number; score: number; topic: string };
}

/** A prediction under way: what is known before the first token, and the tokens. */
export interface Prediction {
  question: string;
  chatId: string;
  sessionId: string;
  memoryType: string;
  /** The answer's message id, known in advance (the `metadata` event precedes nothing it names). */
  chatMessageId: string;
  /** Whether the answer goes out as Flowise's event stream. */
  streaming: boolean;
  sourceDocuments: SourceDocument[];
  /** A Tool Agent's tools as they run (complete once `tokens` ends). */
  usedTools?: UsedTool[];
  headers: Record<string, string>;
  executionId?: string;
  /** The answer as it comes; once it ends, the question and the answer are stored. */
  tokens: AsyncGenerator<string, void, undefined>;
}

interface PredictionDeps {
  flows: FlowService;
  store: FlowStore;
  lookups: FlowLookups;
  gateway: ChatGateway;
  knowledge: KnowledgeSearch | null;
  workflows: WorkflowRunner | null;
  limiter: Limiter;
  clock: Clock;
  workflowTimeoutMs: number;
  /** What a chatflow canvas's chained chains and agent tools reach. */
  plan: PlanDeps;
  /** The account's static Flowise variables (`$vars.x` of a canvas); null: none. */
  staticVars?: (accountId: string) => Promise<Record<string, string>>;
}

/** Flowise's name for a window memory; `none` when the flow keeps none. */
const memoryTypeOf = (def: FlowDefinition) =>
  def.memory.type === 'window' ? 'Buffer Window Memory' : 'none';

/** Longest retrieval query, as `POST /api/knowledge/query` accepts. */
const MAX_RETRIEVAL_QUERY = 4_000;

/** Fields of a workflow's answer read as the flow's text, in this order. */
const TEXT_FIELDS = ['text', 'answer', 'output'] as const;

/**
 * A prediction: the flow's definition (with the caller's allowed overrides), its memory or the
 * caller's history, retrieval for rag flows, then the model through the gateway (usage, budget and
 * fallbacks as any gateway call) or the workflow; the turn is stored when the answer is complete.
 */
export class PredictionService {
  constructor(private readonly deps: PredictionDeps) {}

  async predict(
    principal: Principal,
    flowId: string,
    body: PredictionBodyT,
    options: { signal: AbortSignal },
  ): Promise<Prediction> {
    const loaded = await this.deps.flows.load(principal.accountId, flowId);
    // Images go with the question to a chat model that allows them; text files join the context.
    const uploads = readUploads(body.uploads ?? [], {
      images: loaded.definition.flowise?.plan?.imageUploads === true,
    });
    const sent = (body.overrideConfig ?? {}) as Record<string, unknown>;
    const flowise = loaded.definition.flowise;
    const applied = applyOverrides(
      loaded.definition,
      flowise ? flowiseOverride(sent, new Set(flowise.nodeIds)) : sent,
      this.deps.lookups,
      principal.accountId,
    );
    const { definition: def, sessionId: overrideSession } = applied;
    let vars = applied.vars;
    // Flowise's `{{$vars.x}}`: the account's static variables, the caller's overrideConfig.vars over them.
    // Read only for a canvas whose prompts name one, so other predictions pay no query.
    if (flowise && this.deps.staticVars && /\{vars\./.test(def.promptTemplate + def.systemPrompt))
      vars = { ...(await this.deps.staticVars(principal.accountId)), ...vars };
    await this.checkRate(principal, flowId, def);
    // A flow that does not stream answers JSON even when asked to stream: the SDK expects just that.
    const streaming = body.streaming === true && loaded.definition.isStreaming;

    const chatId = body.chatId ?? randomUUID();
    const sessionId = body.sessionId ?? overrideSession ?? chatId;
    // A chat the caller names no id for is new: its session is the UUID made here, with no turns to read.
    const named = body.chatId !== undefined || body.sessionId !== undefined || overrideSession !== undefined;
    const history =
      named || (body.history?.length ?? 0) > 0 ? await this.history(flowId, sessionId, def, body) : [];
    const extra = typeof vars.context === 'string' ? vars.context : '';
    // Flowise puts a whole uploaded file before the question.
    const asked = uploads.text === '' ? body.question : `${uploads.text}\n\n${body.question}`;
    const common = {
      question: body.question,
      chatId,
      sessionId,
      memoryType: memoryTypeOf(def),
      // Made in this order: ids order the two messages of a turn, which share a timestamp.
      questionMessageId: newId('fmsg'),
      chatMessageId: newId('fmsg'),
      streaming,
    };
    const store = (text: string, sources: SourceDocument[], usedTools: UsedTool[] = []) =>
      this.storeTurn(flowId, common, text, sources, usedTools, memoryTypeOf(def));

    const plan = flowise?.plan;
    // Flowise's moderation answers its message instead of running the chain.
    const refusal = moderated(body.question, plan?.moderation);
    if (refusal !== null)
      return { ...common, sourceDocuments: [], headers: {}, tokens: whole(refusal, [], store) };
    const call = { principal, signal: options.signal };
    if (plan?.steps && plan.steps.length > 0) {
      const filled: Record<string, unknown> = { ...vars };
      for (const step of plan.steps)
        filled[step.id] = await answerStep(this.deps.plan, call, step, body.question, filled);
      vars = filled;
    }
    if (plan?.agent) {
      const messages = buildMessages({
        systemPrompt: def.systemPrompt,
        template: templateOf(def),
        question: asked,
        context: extra,
        history,
        vars,
      });
      withImages(messages, uploads.images);
      const agent = runAgent(this.deps.plan, call, {
        model: def.model as string,
        messages,
        tools: plan.agent.tools,
        maxIterations: plan.agent.maxIterations,
        temperature: def.temperature,
        maxTokens: def.maxTokens,
        vars,
        // Web-search keys are the account's variables (read only for an agent with a search tool).
        accountVars:
          this.deps.staticVars && plan.agent.tools.some((t) => t.type === 'search')
            ? await this.deps.staticVars(principal.accountId)
            : {},
        question: body.question,
      });
      // Up to the first model call's first event before answering: its failure is still an HTTP error,
      // and its headers are the answer's.
      const primed = await agent.loop.next();
      async function* tokens(): AsyncGenerator<string, void, undefined> {
        let next = primed;
        let announced = false;
        while (!next.done) {
          const event = next.value;
          if (event.type === 'delta') yield event.delta;
          // Flowise's stream starts at the model's first chunk, a tool call's too: an empty token
          // (nothing for clients to add) lets `start` go out before the tools run.
          else if (!announced) yield '';
          announced = true;
          next = await agent.loop.next();
        }
        await store(next.value.content, agent.sources, agent.usedTools);
      }
      return {
        ...common,
        sourceDocuments: agent.sources,
        usedTools: agent.usedTools,
        headers: agent.headers,
        tokens: tokens(),
      };
    }

    if (def.kind === 'workflow') {
      const { executionId, text } = await this.runWorkflow(principal, def, {
        question: asked,
        context: extra,
        chatId,
        sessionId,
        history: history.map((t) => ({ role: t.role, content: t.content })),
        // Parsed JSON from the request body: JSON by construction.
        vars: vars as Record<string, Json>,
      });
      return { ...common, sourceDocuments: [], headers: {}, executionId, tokens: whole(text, [], store) };
    }

    const sourceDocuments = def.kind === 'rag' ? await this.retrieve(principal, body.question, def) : [];
    const context = [extra, ...sourceDocuments.map(passageText)].filter((t) => t !== '').join('\n\n');
    const messages = buildMessages({
      systemPrompt: def.systemPrompt,
      template: templateOf(def),
      question: asked,
      context,
      history,
      vars,
    });
    withImages(messages, uploads.images);
    const passages: Passage[] = sourceDocuments.map((d) => ({
      text: d.pageContent,
      source: d.metadata.title ?? d.metadata.documentId,
      score: d.metadata.score,
    }));
    const session = await this.deps.gateway.chat(
      { principal, endpoint: 'flow.prediction', stream: streaming, signal: options.signal },
      def.model as string,
      {
        messages,
        options: {
          ...(def.temperature !== null ? { temperature: def.temperature } : {}),
          ...(def.maxTokens !== null ? { maxTokens: def.maxTokens } : {}),
        },
        ...(def.kind === 'rag' ? { grounding: { question: body.question, passages } } : {}),
      },
    );
    async function* tokens(): AsyncGenerator<string, void, undefined> {
      let text = '';
      for await (const event of session.events) {
        if (event.type !== 'delta' || !event.content) continue;
        text += event.content;
        yield event.content;
      }
      await store(text, sourceDocuments);
    }
    return { ...common, sourceDocuments, headers: session.headers, tokens: tokens() };
  }

  /** The caller's history when it sends one (Flowise's `history`), else the flow's window memory. */
  private async history(flowId: string, sessionId: string, def: FlowDefinition, body: PredictionBodyT) {
    if (body.history && body.history.length > 0) return turnsFromHistory(body.history);
    if (def.memory.type !== 'window') return [];
    const rows = await this.deps.store.recent(flowId, sessionId, def.memory.windowSize);
    return rows.map(
      (r): Turn => ({ role: r.role === 'userMessage' ? 'user' : 'assistant', content: r.content }),
    );
  }

  /** Retrieval's query embedding is the caller's, like the answer (its models and token budget). */
  private async retrieve(
    principal: Principal,
    question: string,
    def: FlowDefinition,
  ): Promise<SourceDocument[]> {
    if (!this.deps.knowledge)
      throw new AppError('SERVICE_UNAVAILABLE', 'The knowledge base is not enabled on this server');
    const { results } = await this.deps.knowledge.query(principal.accountId, {
      payerKeyId: principal.keyId,
      // The knowledge API's own cap on a query: a long question searches with its beginning.
      query: question.slice(0, MAX_RETRIEVAL_QUERY),
      topK: def.topK,
      topics: def.topics,
      mode: 'hybrid',
      ...(def.minScore !== null ? { minScore: def.minScore } : {}),
    });
    return results.map((r) => ({
      pageContent: r.text,
      metadata: {
        documentId: r.documentId,
        title: r.title ?? null,
        pageNumber: r.pageNumber,
        score: r.score,
        topic: r.topic,
      },
    }));
  }

  private async runWorkflow(principal: Principal, def: FlowDefinition, input: Record<string, Json>) {
    if (!this.deps.workflows)
      throw new AppError('SERVICE_UNAVAILABLE', 'The workflow service is not enabled on this server');
    const { executionId, response } = await this.deps.workflows.run({
      accountId: principal.accountId,
      workflowId: def.workflowId as string,
      mode: 'flow',
      body: input,
      timeoutMs: this.deps.workflowTimeoutMs,
    });
    if (response.kind === 'error')
      throw new AppError(response.code as ErrorCode, response.message, { ...response.details, executionId });
    if (response.statusCode >= 400)
      throw new AppError('UNPROCESSABLE', `The workflow answered ${response.statusCode}`, {
        executionId,
        body: response.body as unknown,
      });
    return { executionId, text: answerText(response.body) };
  }

  private async checkRate(principal: Principal, flowId: string, def: FlowDefinition): Promise<void> {
    const rate = def.rateLimit;
    if (!rate) return;
    // Per flow and calling key, so one client cannot spend another's allowance.
    const who = principal.keyId ?? principal.accountId;
    const decision = await this.deps.limiter.hitWindow(
      `flow:${flowId}:${who}`,
      rate.limitMax,
      rate.limitDuration,
    );
    if (decision.allowed) return;
    const error = tooMany(decision, 'The flow rate limit');
    if (!rate.limitMsg) throw error;
    throw new AppError('RATE_LIMIT_EXCEEDED', rate.limitMsg, error.details, error.headers);
  }

  private async storeTurn(
    flowId: string,
    ids: {
      question: string;
      chatId: string;
      sessionId: string;
      questionMessageId: string;
      chatMessageId: string;
    },
    text: string,
    sources: SourceDocument[],
    usedTools: UsedTool[],
    memoryType: string,
  ): Promise<void> {
    const at = this.deps.clock.now().toISOString();
    const base = {
      flow_id: flowId,
      chat_id: ids.chatId,
      session_id: ids.sessionId,
      memory_type: memoryType,
      created_at: at,
    };
    const question: FlowMessageRow = {
      ...base,
      id: ids.questionMessageId,
      role: 'userMessage',
      content: ids.question,
      source_documents: null,
    };
    const answer: FlowMessageRow = {
      ...base,
      id: ids.chatMessageId,
      role: 'apiMessage',
      content: text,
      source_documents: sources.length > 0 ? JSON.stringify(sources) : null,
      ...(usedTools.length > 0 ? { used_tools: JSON.stringify(usedTools) } : {}),
    };
    await this.deps.store.addTurn(question, answer);
  }
}

/** The uploaded images go with the question (the last user message). */
function withImages(messages: ChatMessage[], images: string[]): void {
  const last = messages.at(-1);
  if (images.length > 0 && last?.role === 'user') last.images = images;
}

/** A passage as the prompt shows it: its title, then its text. */
function passageText(doc: SourceDocument): string {
  return doc.metadata.title ? `[${doc.metadata.title}]\n${doc.pageContent}` : doc.pageContent;
}

/** A workflow's answer as text: its text-like field, else the JSON itself. */
function answerText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    for (const field of TEXT_FIELDS) {
      const value = (body as Record<string, unknown>)[field];
      if (typeof value === 'string') return value;
    }
  }
  return body === null || body === undefined ? '' : JSON.stringify(body);
}

/** A whole answer as a one-token stream, stored once read. */
async function* whole(
  text: string,
  sources: SourceDocument[],
  store: (text: string, sources: SourceDocument[]) => Promise<void>,
): AsyncGenerator<string, void, undefined> {
  if (text !== '') yield text;
  await store(text, sources);
}
