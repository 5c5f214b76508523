import { type ChatMessage, runToolLoop } from '../../../../llm/index.js';
import { type NodeExecutionContext, NodeOperationError } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import { type AiTool, type ChatModel, type OutputParser, supplied, toolSpec, toolsOf } from '../ai-parts.js';
import { fillTemplate } from '../ask.js';
import type { WireToolCall } from '../openai-wire.js';
import { NAIVE_FIX_TEMPLATE } from '../structured-output.js';

/** n8n's name for the tool an agent with an output parser answers through. */
const FINAL_TOOL = 'format_final_json_response';

interface AgentRun {
  prompt: string;
  /** Images of the item (data URLs) sent with the prompt (n8n's passthroughBinaryImages). */
  images?: string[];
  systemMessage: string;
  maxIterations: number;
  useParser: boolean;
  useFallback: boolean;
  /** The model's text as the loop reads it (n8n's streaming agent), before the run's end. */
  onText?: (text: string) => void;
}

interface AgentStep {
  action: { tool: string; toolInput: Json; toolCallId: string; log: string; type: 'tool_call' };
  observation: string;
}

/** One item's agent run: its models, tools, memory and parser from the sub-nodes, then the loop. */
export async function runAgentItem(
  ctx: NodeExecutionContext<unknown>,
  itemIndex: number,
  run: AgentRun,
): Promise<{ output: unknown; steps: AgentStep[] }> {
  const modelHandles = ctx.subNodes('ai_languageModel');
  const first = modelHandles.find((h) => h.inputIndex === 0) ?? modelHandles[0];
  if (!first) throw new NodeOperationError('A Chat Model sub-node must be connected and enabled');
  const model = await supplied(first, itemIndex, 'chatModel');
  const fallbackHandle = run.useFallback ? modelHandles.find((h) => h.inputIndex === 1) : undefined;
  if (run.useFallback && !fallbackHandle)
    throw new NodeOperationError(
      'A fallback Chat Model must be connected when "Enable Fallback Model" is on',
    );
  const fallback = fallbackHandle ? await supplied(fallbackHandle, itemIndex, 'chatModel') : undefined;
  const tools = await toolsOf(ctx.subNodes('ai_tool'), itemIndex);
  const memoryHandle = ctx.subNodes('ai_memory')[0];
  const memory = memoryHandle ? await supplied(memoryHandle, itemIndex, 'memory') : undefined;
  const parserHandle = run.useParser ? ctx.subNodes('ai_outputParser')[0] : undefined;
  if (run.useParser && !parserHandle)
    throw new NodeOperationError(
      'An Output Parser sub-node must be connected when "Require Specific Output Format" is on',
    );
  const parser = parserHandle ? await supplied(parserHandle, itemIndex, 'outputParser') : undefined;

  const messages: ChatMessage[] = [];
  if (run.systemMessage.trim() !== '') messages.push({ role: 'system', content: run.systemMessage });
  if (memory) messages.push(...(await memory.load()));
  messages.push({ role: 'user', content: run.prompt, ...(run.images?.length ? { images: run.images } : {}) });

  const byName = new Map(tools.map((t) => [t.name, t]));
  const specs = tools.map(toolSpec);
  if (parser)
    specs.push({
      type: 'function',
      function: {
        name: FINAL_TOOL,
        description: 'Use this tool to give the final answer in the required format',
        parameters: { type: 'object', properties: { output: parser.schema }, required: ['output'] },
      },
    });
  const steps: AgentStep[] = [];
  let ids = 0;
  const loop = runToolLoop(
    {
      chat: (conversation, offered) =>
        withFallback(model, fallback, conversation, offered, run.onText ? { stream: true } : undefined),
      execute: async (call) => {
        const malformed = (call as WireToolCall).malformed;
        if (malformed !== undefined)
          throw new Error(`the arguments are not a JSON object: ${malformed.slice(0, 200)}`);
        if (call.name === FINAL_TOOL && parser) {
          parser.parse(call.arguments.output); // throws what is wrong; the model reads it and tries again
          return 'ok';
        }
        const tool = toolNamed(byName, call.name);
        if (!tool) throw new Error(`${call.name} is not a valid tool, try another one.`);
        return tool.run(call.arguments);
      },
    },
    messages,
    {
      tools: specs,
      maxRounds: run.maxIterations,
      answerAfterTools: false,
      finish: (calls) => {
        const final = calls.find((c) => c.name === FINAL_TOOL);
        if (!final || !parser || (final as WireToolCall).malformed !== undefined) return undefined;
        try {
          return { value: parser.parse(final.arguments.output) };
        } catch {
          return undefined;
        }
      },
      newId: () => `call_${++ids}`,
    },
  );
  let next = await loop.next();
  for (; !next.done; next = await loop.next()) {
    const e = next.value;
    if (e.type === 'delta' && e.delta !== '') run.onText?.(e.delta);
    else if (e.type === 'tool.result')
      steps.push({
        action: {
          tool: e.name,
          toolInput: e.arguments as Json,
          toolCallId: e.id,
          log: `Calling ${e.name} with input: ${JSON.stringify(e.arguments)}`,
          type: 'tool_call',
        },
        observation: typeof e.output === 'string' ? e.output : JSON.stringify(e.output),
      });
  }
  const result = next.value;
  if (result.exhausted)
    throw new NodeOperationError(`Agent stopped due to max iterations (${run.maxIterations})`, {
      description: 'The model kept calling tools; raise Max Iterations or change the prompt',
    });
  let out: unknown = result.content;
  if (result.finished !== undefined) out = (result.finished as { value: unknown }).value;
  else if (parser) out = await parseOrFix(parser, result.content);
  if (memory) await memory.save(run.prompt, typeof out === 'string' ? out : JSON.stringify(out));
  return { output: out, steps };
}

/** A model's failure is the fallback model's turn (n8n's withFallbacks). */
async function withFallback(
  model: ChatModel,
  fallback: ChatModel | undefined,
  messages: ChatMessage[],
  tools: Parameters<ChatModel['chat']>[1],
  options?: Parameters<ChatModel['chat']>[2],
) {
  try {
    return await model.chat(messages, tools, options);
  } catch (error) {
    if (!fallback) throw error;
    return fallback.chat(messages, tools, options);
  }
}

function toolNamed(byName: Map<string, AiTool>, name: string): AiTool | undefined {
  const exact = byName.get(name);
  if (exact) return exact;
  const lower = name.toLowerCase();
  for (const [key, tool] of byName) if (key.toLowerCase() === lower) return tool;
  return undefined;
}

/** The final text through the parser; an auto-fixing parser asks its model once to repair it. */
export async function parseOrFix(parser: OutputParser, text: string): Promise<unknown> {
  try {
    return parser.parse(text);
  } catch (error) {
    if (!parser.fixWith) throw new NodeOperationError(error instanceof Error ? error.message : String(error));
    const problem = error instanceof Error ? error.message : String(error);
    const content = fillTemplate(parser.fixPrompt ?? NAIVE_FIX_TEMPLATE, {
      instructions: `Answer with JSON meeting this schema: ${JSON.stringify(parser.schema)}`,
      completion: text,
      error: problem,
    });
    const answer = await parser.fixWith.chat([{ role: 'user', content }], undefined);
    let fixed = '';
    for await (const e of answer.events) if (e.type === 'delta' && e.content) fixed += e.content;
    try {
      return parser.parse(fixed);
    } catch (again) {
      throw new NodeOperationError(again instanceof Error ? again.message : String(again));
    }
  }
}
