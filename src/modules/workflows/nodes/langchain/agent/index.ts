import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { LANGCHAIN } from '../ai-parts.js';
import { runAgentItem } from './run-agent.js';

const Options = Type.Object(
  {
    systemMessage: Type.String({ default: 'You are a helpful assistant', maxLength: 100_000 }),
    maxIterations: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
    returnIntermediateSteps: Type.Boolean({ default: false }),
    passthroughBinaryImages: Type.Boolean({ default: true }),
    enableStreaming: Type.Boolean({ default: true }),
    enableStreamingToolCalls: Type.Optional(Type.Boolean()),
    saveAnnouncements: Type.Optional(Type.Boolean()),
    cleanToolCallContent: Type.Optional(Type.Boolean()),
    batching: Type.Optional(
      Type.Object(
        {
          batchSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
          delayBetweenBatches: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, default: {} },
);

const Parameters = Type.Object(
  {
    promptType: Type.Enum(['auto', 'define', 'guardrails'] as const, { default: 'auto' }),
    text: Type.String({ default: '={{ $json.chatInput }}', maxLength: 1_000_000 }),
    hasOutputParser: Type.Boolean({ default: false }),
    needsFallback: Type.Boolean({ default: false }),
    options: Options,
    notice: Type.Optional(Type.String()),
    aiAgentStarterCallout: Type.Optional(Type.String()),
    preBuiltAgentsCallout: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/**
 * n8n's AI Agent (the tools agent, v2–3.1): per item, the prompt goes to the attached chat model with the
 * attached tools, memory and output parser, on the platform's one tool loop; a fallback model (input 1)
 * answers when the first fails.
 */
export const agentNode = defineNode({
  type: `${LANGCHAIN}.agent`,
  versions: [2, 2.1, 2.2, 3, 3.1],
  schema: Parameters,
  aiInputs: ['ai_languageModel', 'ai_memory', 'ai_tool', 'ai_outputParser'],
  async execute(ctx) {
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      const prompt = p.promptType === 'auto' ? ctx.items[i]?.json.chatInput : p.text;
      if (typeof prompt !== 'string' || prompt.trim() === '')
        throw new NodeOperationError('No prompt specified', {
          description:
            p.promptType === 'auto'
              ? "Expected to find the prompt in an input field called 'chatInput' (this is what the chat trigger node outputs)"
              : 'The prompt (text) is empty',
        });
      const result = await runAgentItem(ctx, i, {
        prompt,
        systemMessage: p.options.systemMessage,
        maxIterations: p.options.maxIterations,
        useParser: p.hasOutputParser,
        useFallback: p.needsFallback,
      });
      const json: Record<string, Json> = { output: result.output as Json };
      if (p.options.returnIntermediateSteps) json.intermediateSteps = result.steps as unknown as Json;
      out.push({ json });
    }
    return output(out);
  },
});
