import { type NodeExecutionContext, NodeOperationError } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { type OpenAiTarget, postJson } from '../../n8n/open-ai/transport.js';
import { locatorValue, toolSpec, toolsOf } from '../ai-parts.js';
import type { OpenAiParams } from './schema.js';

/**
 * n8n bounds the tool loop by `maxToolsIterations` (15 by default from v1.5; 0 and older versions:
 * no bound). Here 0 and the older versions stop at this many rounds, so a model that calls tools
 * forever fails its own item instead of running unbounded.
 */
const MAX_TOOL_ROUNDS = 100;

interface ChatCompletion {
  choices?: Array<{ message?: { content?: unknown; tool_calls?: ToolCallWire[] } & Record<string, unknown> }>;
  usage?: unknown;
}
interface ToolCallWire {
  id?: string;
  function?: { name?: string; arguments?: string };
}

/** Text → Message a Model: OpenAI's chat completions, with the node's connected tools called in a loop. */
export async function messageModel(
  ctx: NodeExecutionContext<OpenAiParams>,
  p: OpenAiParams,
  i: number,
  target: OpenAiTarget,
): Promise<Item[]> {
  const version = ctx.node.typeVersion ?? 1;
  const model = locatorValue(p.modelId);
  if (!model) throw new NodeOperationError('No model is chosen (the node’s Model parameter)');
  let messages: Array<Record<string, unknown>> = (p.messages.values ?? []).map((m) => ({
    role: m.role,
    content: m.content,
  }));
  const o = p.options;
  const body: Record<string, unknown> = { model };
  // n8n sends the option names as they are, but renames these two (max_completion_tokens: what
  // reasoning models accept).
  if (o.maxTokens !== undefined) body.max_completion_tokens = o.maxTokens;
  if (o.topP !== undefined) body.top_p = o.topP;
  for (const key of [
    'frequency_penalty',
    'presence_penalty',
    'temperature',
    'n',
    'reasoning_effort',
  ] as const)
    if (o[key] !== undefined) body[key] = o[key];
  if (p.jsonOutput) {
    body.response_format = { type: 'json_object' };
    messages = [
      { role: 'system', content: 'You are a helpful assistant designed to output JSON.' },
      ...messages,
    ];
  }
  const tools = p.hideTools === 'hide' ? [] : await toolsOf(ctx.subNodes('ai_tool'), i);
  if (tools.length > 0) body.tools = tools.map(toolSpec);
  const bounded = version >= 1.5 && (o.maxToolsIterations ?? 15) > 0;
  const limit = bounded ? (o.maxToolsIterations ?? 15) : MAX_TOOL_ROUNDS;

  const ask = async () =>
    (await postJson(ctx.deps, target, '/chat/completions', { ...body, messages })) as ChatCompletion;
  let response = await ask();
  let round = 1;
  let calls = response.choices?.[0]?.message?.tool_calls;
  while (calls?.length) {
    if (round >= limit) {
      if (!bounded)
        throw new NodeOperationError(`The model was still calling tools after ${MAX_TOOL_ROUNDS} rounds`);
      break;
    }
    messages.push(response.choices?.[0]?.message ?? {});
    for (const call of calls) {
      const tool = tools.find((t) => t.name === call.function?.name);
      let answer: unknown = '';
      if (tool) answer = await tool.run(argumentsOf(call.function?.arguments));
      messages.push({
        tool_call_id: call.id,
        role: 'tool',
        content: typeof answer === 'string' ? answer : JSON.stringify(answer ?? ''),
      });
    }
    response = await ask();
    calls = response.choices?.[0]?.message?.tool_calls;
    round++;
  }
  if (p.jsonOutput)
    for (const choice of response.choices ?? []) {
      const message = choice.message;
      if (message && typeof message.content === 'string')
        try {
          message.content = JSON.parse(message.content);
        } catch {
          // n8n keeps the text when it is not JSON.
        }
    }
  if (p.simplify ?? true)
    return (response.choices ?? []).map((choice) => ({ json: choice as Record<string, Json> }));
  return [{ json: response as Record<string, Json> }];
}

/** n8n hands a tool `arguments.input` when the model wrote one, else the arguments object. */
function argumentsOf(text: string | undefined): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text ?? '{}');
  } catch {
    throw new NodeOperationError(
      `The model called a tool with arguments that are not JSON: ${String(text).slice(0, 200)}`,
    );
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new NodeOperationError('The model called a tool with arguments that are not a JSON object');
  return parsed as Record<string, unknown>;
}

/** Text → Classify Text for Violations: OpenAI's moderations. */
export async function classifyText(
  ctx: NodeExecutionContext<OpenAiParams>,
  p: OpenAiParams,
  target: OpenAiTarget,
): Promise<Item[]> {
  const model = p.options.useStableModel ? 'text-moderation-stable' : 'text-moderation-latest';
  const answer = await postJson(ctx.deps, target, '/moderations', { input: p.input ?? '', model });
  const first = Array.isArray(answer.results)
    ? (answer.results[0] as Record<string, Json> | undefined)
    : undefined;
  if (!first) return [];
  return [{ json: p.simplify === true ? { flagged: first.flagged ?? false } : first }];
}
