import type { Principal } from '../../core/auth/principal.js';
import { assertNever } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { type ChatGateway, type ChatMessage, runToolLoop, type ToolCall } from '../llm/index.js';
import type { SourceView, StepView, Usage } from './agent-events.js';
import type { AgentDefinition } from './agent-service.js';
import { McpTurnClients } from './mcp-client.js';
import { isMcpTool, type ResolvedTool, resolveTools } from './tool-specs.js';
import { type McpCalls, runTool, searchKnowledge, type ToolDeps } from './tools.js';

/** What a turn streams while it runs; the route or the socket wraps them into the API's events. */
export type TurnEvent =
  | { type: 'delta'; delta: string }
  | { type: 'tool.call'; id: string; name: string; arguments: unknown }
  | { type: 'tool.result'; id: string; name: string; output: unknown };

export interface TurnResult {
  content: string;
  steps: StepView[];
  sources: SourceView[];
  usage: Usage;
}

interface TurnInput {
  principal: Principal;
  agent: AgentDefinition;
  userId: string | null;
  /** Earlier messages of the conversation, oldest first. */
  history: Array<{ role: 'user' | 'assistant'; content: string }>;
  content: string;
  signal: AbortSignal;
}

export interface RunnerDeps {
  gateway: ChatGateway;
  tools: ToolDeps;
  /** Whether the model can call tools (the built-in models cannot). */
  callsTools(model: string): boolean;
}

/** Passages retrieved up front for the system prompt. */
const RETRIEVAL_TOP_K = 4;
/** Tool calls run from one model answer. */
const MAX_CALLS_PER_ROUND = 8;
/** A tool's output as the model and the stored steps see it, at most this long. */
const MAX_TOOL_OUTPUT_CHARS = 20_000;

const elapsed = (since: number) => Math.round((performance.now() - since) * 100) / 100;

function systemPrompt(agent: AgentDefinition, sources: SourceView[]): string {
  if (sources.length === 0) return agent.instructions;
  const passages = sources.map((s, i) => `[${i + 1}] ${s.title ?? s.documentId}\n${s.text}`).join('\n\n');
  const lead = agent.instructions.trim() === '' ? '' : `${agent.instructions}\n\n`;
  return `${lead}Passages from the knowledge base that may help (cite them by title):\n\n${passages}`;
}

/**
 * One agent turn: retrieval from its topics into the system prompt; the model through the gateway
 * with its tools; each tool call validated against its schema and run; at most `maxToolCalls`
 * rounds of tools, then one answer without them. Every step is recorded.
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

async function* turn(
  deps: RunnerDeps,
  input: TurnInput,
  mcp: McpCalls,
): AsyncGenerator<TurnEvent, TurnResult, undefined> {
  const { agent, principal, signal } = input;
  const steps: StepView[] = [];
  const sources: SourceView[] = [];
  const usage: Usage = { promptTokens: 0, completionTokens: 0 };

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
    sources.push(...found);
    steps.push({
      type: 'retrieval',
      name: 'knowledge',
      input: { query: input.content.slice(0, 500), topics: agent.knowledgeTopics, topK: RETRIEVAL_TOP_K },
      output: { count: found.length, documentIds: [...new Set(found.map((s) => s.documentId))] },
      ms: elapsed(started),
    });
  }

  const canCallTools = agent.tools.length > 0 && agent.maxToolCalls > 0 && deps.callsTools(agent.model);
  const tools = canCallTools ? resolveTools(agent.tools) : [];
  const byFunction = new Map(tools.map((t) => [t.functionName, t]));
  const messages: ChatMessage[] = [];
  const system = systemPrompt(agent, sources);
  if (system.trim() !== '') messages.push({ role: 'system', content: system });
  for (const m of input.history) messages.push({ role: m.role, content: m.content });
  messages.push({ role: 'user', content: input.content });

  const displayName = (fn: string) => byFunction.get(fn)?.name ?? fn;
  const loop = runToolLoop(
    {
      chat: async (conversation, offered) => {
        const session = await deps.gateway.chat(
          { principal, endpoint: 'agent.message', stream: true, signal },
          agent.model,
          {
            messages: conversation,
            ...(offered ? { tools: offered } : {}),
            options: agent.temperature !== null ? { temperature: agent.temperature } : {},
            // A model that cannot read a prompt quotes from the passages retrieved for this question.
            ...(sources.length > 0
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
      },
      execute: async (call) => {
        const { output, found } = await execute(deps.tools, byFunction.get(call.name), call, input, mcp);
        sources.push(...found);
        return output;
      },
    },
    messages,
    {
      tools: tools.map((t) => t.spec),
      maxRounds: canCallTools ? agent.maxToolCalls : 0,
      answerAfterTools: true,
      maxCallsPerRound: MAX_CALLS_PER_ROUND,
      maxToolOutputChars: MAX_TOOL_OUTPUT_CHARS,
      newId: () => newId('call'),
    },
  );
  let next = await loop.next();
  for (; !next.done; next = await loop.next()) {
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
            ...(deps.callsTools(agent.model)
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
        yield { type: 'tool.call', id: event.id, name: displayName(event.name), arguments: event.arguments };
        break;
      case 'tool.result': {
        const name = displayName(event.name);
        steps.push({ type: 'tool_call', name, input: event.arguments, output: event.output, ms: event.ms });
        yield { type: 'tool.result', id: event.id, name, output: event.output };
        break;
      }
      default:
        assertNever(event);
    }
  }
  const { content, usage: spent } = next.value;
  usage.promptTokens += spent.promptTokens;
  usage.completionTokens += spent.completionTokens;
  return { content, steps, sources, usage };
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
      mcp,
      signal: input.signal,
    });
    return { output: outcome.output, found: outcome.sources };
  } catch (error) {
    if (input.signal.aborted) throw error;
    return { output: { error: error instanceof Error ? error.message : String(error) }, found: [] };
  }
}
