import { Type } from 'typebox';
import { defineSubNode } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import { AgentParameters, promptOf } from '../agent/parameters.js';
import { runAgentItem } from '../agent/run-agent.js';
import { type AiTool, LANGCHAIN } from '../ai-parts.js';
import { checkFromAiArguments, fromAiParameters, fromAiSchema, toolNameOf } from '../from-ai.js';

const Parameters = Type.Object(
  {
    ...AgentParameters.properties,
    promptType: Type.Enum(['auto', 'define', 'guardrails'] as const, { default: 'define' }),
    toolDescription: Type.String({ default: 'AI Agent that can call other tools', maxLength: 10_000 }),
  },
  { additionalProperties: false },
);

/** Without `$fromAI` in its parameters the tool takes one text, `input` (its item's `$json.input`). */
const INPUT_SCHEMA = {
  type: 'object',
  properties: { input: { type: 'string', description: 'The request for this agent' } },
  required: ['input'],
};

/**
 * n8n's AI Agent Tool (v2.2–3): an agent attached to another agent as a tool, with its own model, tools
 * and memory. When called, its parameters resolve over the model's arguments (`$json`, `$fromAI()`), and
 * it runs on the same tool loop; its answer is the tool's result.
 */
export const agentToolNode = defineSubNode({
  type: `${LANGCHAIN}.agentTool`,
  versions: [2.2, 3],
  schema: Parameters,
  subNode: 'ai_tool',
  aiInputs: ['ai_languageModel', 'ai_memory', 'ai_tool', 'ai_outputParser'],
  async supply(ctx, itemIndex): Promise<AiTool> {
    const fromAi = fromAiParameters(ctx.node.parameters);
    const description =
      typeof ctx.node.parameters.toolDescription === 'string'
        ? ctx.node.parameters.toolDescription
        : 'AI Agent that can call other tools';
    return {
      kind: 'tool',
      name: toolNameOf(ctx.node.name),
      description,
      parameters: fromAi.length > 0 ? fromAiSchema(fromAi) : INPUT_SCHEMA,
      async run(args) {
        const values = fromAi.length > 0 ? checkFromAiArguments(fromAi, args) : textArgument(args);
        const p = await ctx.paramsFor({ json: values as Record<string, Json> }, { $fromAI: values });
        const result = await runAgentItem(ctx, itemIndex, {
          prompt: promptOf(p, values as Record<string, Json>),
          systemMessage: p.options.systemMessage,
          maxIterations: p.options.maxIterations,
          useParser: p.hasOutputParser,
          useFallback: p.needsFallback,
        });
        return typeof result.output === 'string' ? result.output : JSON.stringify(result.output);
      },
    };
  },
});

function textArgument(args: Record<string, unknown>): Record<string, unknown> {
  if (typeof args.input !== 'string') throw new Error("the argument 'input' must be text");
  return { input: args.input };
}
