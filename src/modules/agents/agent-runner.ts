import type { Principal } from '../../core/auth/principal.js';
import { assertNever } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import {
  boundedOutput,
  type ChatGateway,
  type ChatMessage,
  type FileInput,
  type LoopResult,
  runToolLoop,
  type ToolCall,
  type ToolLoopHooks,
} from '../llm/index.js';
import type { SourceView, StepView, Usage } from './agent-events.js';
import type { AgentDefinition } from './agent-service.js';
import { McpTurnClients } from './mcp-client.js';
import { type ResponseFormat, repairPrompt, structuredAnswer, unsatisfiable } from './structured-output.js';
import { type ClientTool, isMcpTool, type ResolvedTool, resolveTools } from './tool-specs.js';
import { type McpCalls, runTool, searchKnowledge, type ToolDeps } from './tools.js';

/** What a turn streams while it runs; the route or the socket wraps them into the API's events. */
export type TurnEvent =
  | { type: 'delta'; delta: string }
  | { type: 'tool.call'; id: string; name: string; arguments: unknown }
  | { type: 'tool.result'; id: string; name: string; output: unknown };

/** Whether and which tool the model must call; `required` and a name bind the turn's first call only. */
export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/**
 * Where a turn stands: the conversation as the model sees it and what was recorded so far. Stored
 * when the turn waits for a client's tool outputs, and read back to continue it.
 */
export interface TurnState {
  messages: ChatMessage[];
  steps: StepView[];
  sources: SourceView[];
  usage: Usage;
  /** Text the model wrote before the pause (it joins the answer). */
  content: string;
  /** Model calls made so far (they count against `maxToolCalls`). */
  rounds: number;
}

export interface TurnResult {
  content: string;
  steps: StepView[];
  sources: SourceView[];
  usage: Usage;
  /** The answer parsed, when the turn asked for a response format. */
  output?: unknown;
  /** Client tool calls the turn waits for (their outputs continue it from `state`). */
  pending?: ToolCall[];
  /** Which of `pending` are server tools waiting for approval (by call id). */
  approvals?: string[];
  /** The agent's approval time of those calls, in seconds, by call id (absent: the server's default). */
  approvalTimeouts?: Record<string, number>;
  state?: TurnState;
}

/** How a turn runs beyond its agent's definition: the request's client tools, tool choice, format. */
export interface TurnOptions {
  clientTools?: ClientTool[];
  toolChoice?: ToolChoice;
  responseFormat?: ResponseFormat;
}

interface TurnInput extends TurnOptions {
  principal: Principal;
  agent: AgentDefinition;
  userId: string | null;
  /** Earlier messages of the conversation, oldest first. */
  history: Array<{ role: 'user' | 'assistant'; content: string }>;
  content: string;
  /** The user message's base64 images and documents (its model reads them: checked before). */
  images?: string[];
  files?: FileInput[];
  signal: AbortSignal;
  /** A paused turn to continue, its client tools' results appended: history and content are not read. */
  resume?: TurnState;
  /** Approved calls of the paused turn: run first when it continues. */
  approved?: ToolCall[];
  /**
   * The conversation given whole (the Responses API, whose client holds it): used instead of the
   * system prompt, history and content; nothing is retrieved.
   */
  messages?: ChatMessage[];
  /** The agent and conversation (their memory blocks); the blocks as the system prompt shows them. */
  agentId?: string;
  conversationId?: string | null;
  memory?: string;
  /** The gateway endpoint its calls are logged under (`agent.message`). */
  endpoint?: string;
  /** Sampling options beyond the agent's temperature (the Responses API's `max_output_tokens`, …). */
  chatOptions?: { temperature?: number; topP?: number; maxTokens?: number };
}

export interface RunnerDeps {
  gateway: ChatGateway;
  tools: ToolDeps;
  /** Whether the model (as the account finds it) can call tools (the built-in models cannot). */
  callsTools(accountId: string, model: string): boolean;
  /** What the model reads (its registry entry's `inputs`: `text`, `image`, `file`). */
  inputs(accountId: string, model: string): readonly string[];
}

/** Passages retrieved up front for the system prompt. */
const RETRIEVAL_TOP_K = 4;
/** Tool calls run from one model answer. */
const MAX_CALLS_PER_ROUND = 8;
/** A tool's output as the model and the stored steps see it, at most this long. */
const MAX_TOOL_OUTPUT_CHARS = 20_000;

const elapsed = (since: number) => Math.round((performance.now() - since) * 100) / 100;

function systemPrompt(agent: AgentDefinition, sources: SourceView[], memory = ''): string {
  const parts = [agent.instructions, memory].filter((p) => p.trim() !== '');
  if (sources.length > 0) {
    const passages = sources.map((s, i) => `[${i + 1}] ${s.title ?? s.documentId}\n${s.text}`).join('\n\n');
    parts.push(`Passages from the knowledge base that may help (cite them by title):\n\n${passages}`);
  }
  return parts.join('\n\n');
}

/**
 * One agent turn: retrieval from its topics into the system prompt; the model through the gateway
 * with its tools; each tool call validated against its schema and run (a client's tool pauses the
 * turn instead); at most `maxToolCalls` rounds of tools, then one answer without them; with a
 * response format, the answer validated (one repair). Every step is recorded.
 */
export async function* runTurn(
  deps: RunnerDeps,
  input: TurnInput,
): AsyncGenerator<TurnEvent, TurnResult, undefined> {
  // The MCP connections the turn opens (on first call) end with it, however it ends.
  const mcp = new McpTurnClients(input.agent.tools.filter(isMcpTool), deps.tools.mcp);
  try {
    return yield* turn(deps, input, mcp);
  } finally {
    await mcp.close();
  }
}

/** The turn's start: retrieval, the system prompt, the history and the new message. */
async function fresh(deps: RunnerDeps, input: TurnInput): Promise<TurnState> {
  const { agent, principal } = input;
  const state: TurnState = {
    messages: [],
    steps: [],
    sources: [],
    usage: { promptTokens: 0, completionTokens: 0 },
    content: '',
    rounds: 0,
  };
  if (agent.knowledgeTopics.length > 0 && deps.tools.knowledge) {
    const started = performance.now();
    const found = await searchKnowledge(
      deps.tools.knowledge,
      principal.accountId,
      principal.keyId,
      agent.knowledgeTopics,
      input.content,
      RETRIEVAL_TOP_K,
    );
    state.sources.push(...found);
    state.steps.push({
      type: 'retrieval',
      name: 'knowledge',
      input: { query: input.content.slice(0, 500), topics: agent.knowledgeTopics, topK: RETRIEVAL_TOP_K },
      output: { count: found.length, documentIds: [...new Set(found.map((s) => s.documentId))] },
      ms: elapsed(started),
    });
  }
  const system = systemPrompt(agent, state.sources, input.memory);
  if (system.trim() !== '') state.messages.push({ role: 'system', content: system });
  for (const m of input.history) state.messages.push({ role: m.role, content: m.content });
  state.messages.push({
    role: 'user',
    content: input.content,
    ...(input.images?.length ? { images: input.images } : {}),
    ...(input.files?.length ? { files: input.files } : {}),
  });
  return state;
}

async function* turn(
  deps: RunnerDeps,
  input: TurnInput,
  mcp: McpCalls,
): AsyncGenerator<TurnEvent, TurnResult, undefined> {
  const { agent, principal, signal } = input;
  const state =
    input.resume ??
    (input.messages
      ? {
          messages: input.messages,
          steps: [],
          sources: [],
          usage: { promptTokens: 0, completionTokens: 0 },
          content: '',
          rounds: 0,
        }
      : await fresh(deps, input));
  const { steps, sources, usage, messages } = state;

  const choice = input.toolChoice ?? 'auto';
  const listed = [...agent.tools, ...(input.clientTools ?? [])];
  const canCallTools =
    choice !== 'none' &&
    listed.length > 0 &&
    agent.maxToolCalls > 0 &&
    deps.callsTools(principal.accountId, agent.model);
  const tools = canCallTools ? resolveTools(listed) : [];
  const byFunction = new Map(tools.map((t) => [t.functionName, t]));
  // `required` or a named tool binds the turn's first model call; a continued turn has made it.
  let bound = input.resume === undefined && (choice === 'required' || typeof choice === 'object');
  const format = input.responseFormat;

  const approval = new Set(agent.requiresApproval ?? []);
  const needsApproval = (t: ResolvedTool | undefined) =>
    t !== undefined &&
    !t.client &&
    (approval.has(t.name) || (t.mcp !== undefined && approval.has(t.mcp.server)));

  const displayName = (fn: string) => byFunction.get(fn)?.name ?? fn;
  const chat: ToolLoopHooks['chat'] = async (conversation, offered) => {
    const toolChoice = offered && bound ? choice : undefined;
    bound = false;
    const session = await deps.gateway.chat(
      { principal, endpoint: input.endpoint ?? 'agent.message', stream: true, signal },
      agent.model,
      {
        messages: conversation,
        ...(offered ? { tools: offered } : {}),
        ...(toolChoice ? { toolChoice } : {}),
        ...(format ? { format: format.schema, openAi: { schemaName: format.name ?? 'answer' } } : {}),
        options: {
          ...(agent.temperature !== null ? { temperature: agent.temperature } : {}),
          ...input.chatOptions,
        },
        // A model that cannot read a prompt quotes from the passages retrieved for this question.
        ...(sources.length > 0 && input.resume === undefined
          ? {
              grounding: {
                question: input.content,
                passages: sources.map((s) => ({
                  text: s.text,
                  source: s.title ?? s.documentId,
                  score: s.score,
                })),
              },
            }
          : {}),
      },
    );
    return { model: session.model.name, events: session.events };
  };
  const hooks: ToolLoopHooks = {
    chat,
    execute: async (call) => {
      const { output, found } = await execute(deps.tools, byFunction.get(call.name), call, input, mcp);
      sources.push(...found);
      return output;
    },
  };

  /** One run of the loop; its events recorded and passed on. */
  async function* loop(maxRounds: number): AsyncGenerator<TurnEvent, LoopResult, undefined> {
    const run = runToolLoop(hooks, messages, {
      tools: tools.map((t) => t.spec),
      maxRounds,
      answerAfterTools: true,
      maxCallsPerRound: MAX_CALLS_PER_ROUND,
      maxToolOutputChars: MAX_TOOL_OUTPUT_CHARS,
      newId: () => newId('call'),
      defer: (call) => {
        const tool = byFunction.get(call.name);
        return tool?.client === true || needsApproval(tool);
      },
    });
    let finished = false;
    try {
      let next = await run.next();
      for (; !next.done; next = await run.next()) {
        const event = next.value;
        switch (event.type) {
          case 'delta':
            yield event;
            break;
          case 'model':
            steps.push({
              type: 'model',
              name: event.model,
              input: { messages: event.messages, tools: event.offered.map(displayName) },
              output: {
                finishReason: event.finishReason,
                chars: event.chars,
                toolCalls: event.toolCalls,
                ...(deps.callsTools(principal.accountId, agent.model)
                  ? {}
                  : {
                      toolsSkipped: true,
                      reason: `${agent.model} cannot call tools; the answer comes from retrieval alone`,
                    }),
              },
              ms: event.ms,
            });
            break;
          case 'tool.call':
            yield {
              type: 'tool.call',
              id: event.id,
              name: displayName(event.name),
              arguments: event.arguments,
            };
            break;
          case 'tool.result': {
            const name = displayName(event.name);
            steps.push({
              type: 'tool_call',
              name,
              input: event.arguments,
              output: event.output,
              ms: event.ms,
            });
            yield { type: 'tool.result', id: event.id, name, output: event.output };
            break;
          }
          default:
            assertNever(event);
        }
      }
      const result = next.value;
      usage.promptTokens += result.usage.promptTokens;
      usage.completionTokens += result.usage.completionTokens;
      state.rounds += result.calls;
      finished = true;
      return result;
    } finally {
      // A consumer that stops between events (its client went while a frame waited to be written)
      // ends the loop here, so the model call under it records itself and gives its token hold back.
      if (!finished) await run.return(undefined as never).catch(() => undefined);
    }
  }

  // Approved calls of a paused turn run now, their results joining the client outputs.
  for (const call of input.approved ?? []) {
    const started = performance.now();
    const id = call.id as string;
    const name = displayName(call.name);
    yield { type: 'tool.call', id, name, arguments: call.arguments };
    const output = boundedOutput(await hooks.execute(call, id, 0), MAX_TOOL_OUTPUT_CHARS);
    messages.push({
      role: 'tool',
      content: typeof output === 'string' ? output : JSON.stringify(output),
      toolCallId: id,
      toolName: call.name,
    });
    steps.push({ type: 'tool_call', name, input: call.arguments, output, ms: elapsed(started) });
    yield { type: 'tool.result', id, name, output };
  }

  const first = yield* loop(canCallTools ? Math.max(0, agent.maxToolCalls - state.rounds) : 0);
  if (first.pending) {
    state.content += first.content;
    for (const call of first.pending)
      yield { type: 'tool.call', id: call.id as string, name: call.name, arguments: call.arguments };
    const approvals = first.pending
      .filter((c) => needsApproval(byFunction.get(c.name)))
      .map((c) => c.id as string);
    const approvalTimeouts: Record<string, number> = {};
    for (const c of first.pending) {
      const tool = byFunction.get(c.name);
      if (!tool || !needsApproval(tool)) continue;
      const seconds =
        agent.approvalTimeouts?.[tool.name] ??
        (tool.mcp ? agent.approvalTimeouts?.[tool.mcp.server] : undefined) ??
        agent.approvalTimeoutSeconds ??
        undefined;
      if (seconds !== undefined) approvalTimeouts[c.id as string] = seconds;
    }
    return {
      content: state.content,
      steps,
      sources,
      usage,
      pending: first.pending,
      approvals,
      approvalTimeouts,
      state,
    };
  }
  const content = state.content + first.content;
  if (!format) return { content, steps, sources, usage };

  const checked = structuredAnswer(first.content, format);
  if (checked.ok) return { content, steps, sources, usage, output: checked.value };
  // One repair: the model reads why its answer failed and answers again, without tools.
  messages.push(
    { role: 'assistant', content: first.content },
    { role: 'user', content: repairPrompt(checked.problems) },
  );
  const repair = yield* loop(0);
  const again = structuredAnswer(repair.content, format);
  if (!again.ok) throw unsatisfiable(again.problems);
  return { content: repair.content, steps, sources, usage, output: again.value };
}

/** A tool call's output; an unknown tool, bad arguments or a failure become an error the model reads. */
async function execute(
  deps: ToolDeps,
  tool: ResolvedTool | undefined,
  call: ToolCall,
  input: TurnInput,
  mcp: McpCalls,
): Promise<{ output: unknown; found: SourceView[] }> {
  if (!tool) return { output: { error: `unknown tool '${call.name}'` }, found: [] };
  if (!tool.validate(call.arguments)) {
    const problems = (tool.validate.errors ?? []).map(
      (e) => `${e.instancePath || '(arguments)'} ${e.message ?? 'is invalid'}`,
    );
    return { output: { error: `invalid arguments: ${problems.join('; ')}` }, found: [] };
  }
  try {
    const outcome = await runTool(deps, tool.name, call.arguments, {
      accountId: input.principal.accountId,
      payerKeyId: input.principal.keyId,
      userId: input.userId,
      topics: input.agent.knowledgeTopics,
      ...(input.agentId ? { agentId: input.agentId } : {}),
      conversationId: input.conversationId ?? null,
      mcp,
      signal: input.signal,
    });
    return { output: outcome.output, found: outcome.sources };
  } catch (error) {
    if (input.signal.aborted) throw error;
    return { output: { error: error instanceof Error ? error.message : String(error) }, found: [] };
  }
}
