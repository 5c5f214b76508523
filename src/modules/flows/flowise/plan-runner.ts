import { ArithmeticError, evaluateArithmetic } from '../../../core/arithmetic.js';
import type { Principal } from '../../../core/auth/principal.js';
import { newId } from '../../../core/ids.js';
import type { KnowledgeSearch } from '../../documents/index.js';
import {
  type ChatGateway,
  type ChatMessage,
  type LoopEvent,
  type LoopResult,
  runToolLoop,
  type ToolSpec,
} from '../../llm/index.js';
import type { ChainStep, FlowisePlan, FlowiseTool } from '../definition.js';
import { buildMessages } from '../prompt.js';
import type { ToolSandbox } from './sandbox.js';
import { type SearchConfig, webSearch } from './web-search.js';

/** What a chatflow's plan reaches: the gateway, the knowledge base, the tools' sandbox. */
export interface PlanDeps {
  gateway: ChatGateway;
  knowledge: KnowledgeSearch | null;
  sandbox: ToolSandbox;
  /** Web-search services (base URLs, the outbound client); null: search tools fail when called. */
  search: SearchConfig | null;
}

interface Call {
  principal: Principal;
  signal: AbortSignal;
}

/** A retrieved passage, as a prediction's `sourceDocuments` shows it. */
export interface PlanSource {
  pageContent: string;
  metadata: { documentId: string; title: string | null; pageNumber: number; score: number; topic: string };
}

/** Tool calls the agent runs from one model answer; a tool's output as the model sees it. */
const MAX_CALLS_PER_ROUND = 8;
const MAX_TOOL_OUTPUT_CHARS = 20_000;

/** Simple prompt moderation: the question contains a line of the deny list (case ignored). */
export function moderated(question: string, moderation: FlowisePlan['moderation']): string | null {
  if (!moderation) return null;
  const lower = question.toLowerCase();
  return moderation.denyList.some((line) => lower.includes(line.toLowerCase())) ? moderation.message : null;
}

/** One LLM chain of the canvas answered whole: its prompt filled with the question and earlier steps. */
export async function answerStep(
  deps: PlanDeps,
  call: Call,
  step: ChainStep,
  question: string,
  vars: Record<string, unknown>,
): Promise<string> {
  const messages = buildMessages({
    systemPrompt: step.systemPrompt,
    template: step.promptTemplate,
    question,
    context: '',
    history: [],
    vars,
  });
  const session = await deps.gateway.chat(
    { principal: call.principal, endpoint: 'flow.prediction', stream: false, signal: call.signal },
    step.model,
    {
      messages,
      options: {
        ...(step.temperature !== null ? { temperature: step.temperature } : {}),
        ...(step.maxTokens !== null ? { maxTokens: step.maxTokens } : {}),
      },
    },
  );
  let text = '';
  for await (const event of session.events)
    if (event.type === 'delta' && event.content) text += event.content;
  return text;
}

/** A tool the agent ran, as Flowise reports it (`usedTools` of the answer, the stream and the message). */
export interface UsedTool {
  tool: string;
  toolInput: unknown;
  toolOutput: unknown;
  error?: string;
}

/** A Tool Agent under way: its loop's events, and what its tools found as they run. */
export interface AgentRun {
  loop: AsyncGenerator<LoopEvent, LoopResult, undefined>;
  sources: PlanSource[];
  usedTools: UsedTool[];
  /** The first model call's gateway headers (set once that call has answered). */
  headers: Record<string, string>;
}

/**
 * A Tool Agent: the llm module's tool loop (the one the platform's agents and n8n's AI Agent run) with
 * the canvas's tools; after `maxIterations` rounds of tools, one answer without them. Nothing runs
 * until the caller pulls the loop, which streams each model answer's text as it comes.
 */
export function runAgent(
  deps: PlanDeps,
  call: Call,
  input: {
    model: string;
    messages: ChatMessage[];
    tools: FlowiseTool[];
    maxIterations: number;
    temperature: number | null;
    maxTokens: number | null;
    vars: Record<string, unknown>;
    /** The account's static Flowise variables (web-search keys). */
    accountVars: Record<string, string>;
    question: string;
  },
): AgentRun {
  const byName = new Map(input.tools.map((t) => [t.name, t]));
  const specs: ToolSpec[] = input.tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: parametersOf(t) },
  }));
  const run: AgentRun = { loop: undefined as never, sources: [], usedTools: [], headers: {} };
  let first = true;
  const loop = runToolLoop(
    {
      chat: async (messages, tools) => {
        const session = await deps.gateway.chat(
          { principal: call.principal, endpoint: 'flow.prediction', stream: true, signal: call.signal },
          input.model,
          {
            messages,
            ...(tools ? { tools } : {}),
            options: {
              ...(input.temperature !== null ? { temperature: input.temperature } : {}),
              ...(input.maxTokens !== null ? { maxTokens: input.maxTokens } : {}),
            },
          },
        );
        if (first) Object.assign(run.headers, session.headers);
        first = false;
        return { model: session.model.name, events: session.events };
      },
      execute: async (toolCall) => {
        const tool = byName.get(toolCall.name);
        if (!tool) throw new Error(`unknown tool '${toolCall.name}'`);
        const args = (toolCall.arguments ?? {}) as Record<string, unknown>;
        return runTool(deps, call, tool, args, input, run.sources);
      },
    },
    input.messages,
    {
      tools: specs,
      maxRounds: input.maxIterations,
      answerAfterTools: true,
      maxCallsPerRound: MAX_CALLS_PER_ROUND,
      maxToolOutputChars: MAX_TOOL_OUTPUT_CHARS,
      newId: () => newId('call'),
    },
  );
  run.loop = recordTools(loop, run.usedTools);
  return run;
}

/** Passes the loop's events on, noting each tool's result in Flowise's `usedTools` shape. */
async function* recordTools(
  loop: AsyncGenerator<LoopEvent, LoopResult, undefined>,
  used: UsedTool[],
): AsyncGenerator<LoopEvent, LoopResult, undefined> {
  let next = await loop.next();
  while (!next.done) {
    const event = next.value;
    if (event.type === 'tool.result') used.push(usedToolOf(event.name, event.arguments, event.output));
    yield event;
    next = await loop.next();
  }
  return next.value;
}

/** A failed tool is `{error}` to the model; Flowise reports it with an empty output and the error. */
function usedToolOf(tool: string, toolInput: unknown, output: unknown): UsedTool {
  const failed =
    output !== null &&
    typeof output === 'object' &&
    Object.keys(output).length === 1 &&
    typeof (output as { error?: unknown }).error === 'string';
  if (failed) return { tool, toolInput, toolOutput: '', error: (output as { error: string }).error };
  return { tool, toolInput, toolOutput: output };
}

function parametersOf(tool: FlowiseTool): Record<string, unknown> {
  switch (tool.type) {
    case 'calculator':
      return {
        type: 'object',
        properties: { input: { type: 'string', description: 'The math expression' } },
        required: ['input'],
      };
    case 'custom':
      return tool.parameters;
    default:
      return {
        type: 'object',
        properties: { input: { type: 'string', description: 'The query or text for the tool' } },
        required: ['input'],
      };
  }
}

const inputText = (args: Record<string, unknown>): string => {
  const value = args.input ?? args.query ?? Object.values(args)[0];
  return typeof value === 'string' ? value : JSON.stringify(value ?? '');
};

async function runTool(
  deps: PlanDeps,
  call: Call,
  tool: FlowiseTool,
  args: Record<string, unknown>,
  input: { vars: Record<string, unknown>; accountVars: Record<string, string>; question: string },
  sources: PlanSource[],
): Promise<unknown> {
  const tenant = call.principal.accountId;
  switch (tool.type) {
    case 'calculator':
      return calculate(inputText(args));
    case 'custom':
      return deps.sandbox.custom(
        tool.code,
        { args, vars: input.vars, flow: { input: input.question } },
        tenant,
      );
    case 'chain':
      return answerStep(deps, call, tool.step, inputText(args), input.vars);
    case 'search':
      if (!deps.search) throw new Error('web search is not enabled on this server');
      return webSearch(deps.search, tool.provider, inputText(args), input.accountVars);
    case 'retriever': {
      if (!deps.knowledge) throw new Error('the knowledge base is not enabled on this server');
      const { results } = await deps.knowledge.query(call.principal.accountId, {
        payerKeyId: call.principal.keyId,
        query: inputText(args).slice(0, 4_000),
        topK: tool.topK,
        topics: [tool.topic],
        mode: 'hybrid',
      });
      const found = results.map((r) => ({
        pageContent: r.text,
        metadata: {
          documentId: r.documentId,
          title: r.title ?? null,
          pageNumber: r.pageNumber,
          score: r.score,
          topic: r.topic,
        },
      }));
      sources.push(...found);
      return found.map((d) => d.pageContent).join('\n\n');
    }
  }
}

/** Flowise's calculator on the platform's one arithmetic evaluator (linear, bounded, no eval). */
function calculate(expression: string): string {
  try {
    return String(evaluateArithmetic(expression));
  } catch (error) {
    if (error instanceof ArithmeticError) return "I don't know how to do that.";
    throw error;
  }
}
