import { defineNode, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { LANGCHAIN } from '../ai-parts.js';
import { imagesOf, AgentParameters as Parameters, promptOf } from './parameters.js';
import { runAgentItem } from './run-agent.js';

/**
 * n8n's AI Agent (the tools agent, v2–3.1): per item, the prompt goes to the attached chat model with the
 * attached tools, memory and output parser, on the platform's one tool loop; a fallback model (input 1)
 * answers when the first fails. When its workflow answers as a stream (a Chat Trigger or Webhook with
 * `responseMode: 'streaming'`) it sends n8n's begin, the model's text as items, and end per item.
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
      const prompt = promptOf(p, ctx.items[i]?.json ?? {});
      const images = p.options.passthroughBinaryImages ? imagesOf(ctx.items[i]) : [];
      // n8n streams from v2.1 on, when the trigger answers as a stream and the option is on.
      const send =
        p.options.enableStreaming && (ctx.node.typeVersion ?? 1) >= 2.1 ? ctx.sendChunk : undefined;
      send?.('begin', i);
      const result = await runAgentItem(ctx, i, {
        ...(send ? { onText: (text: string) => send('item', i, text) } : {}),
        prompt,
        images,
        systemMessage: p.options.systemMessage,
        maxIterations: p.options.maxIterations,
        useParser: p.hasOutputParser,
        useFallback: p.needsFallback,
      });
      const json: Record<string, Json> = { output: result.output as Json };
      if (p.options.returnIntermediateSteps) json.intermediateSteps = result.steps as unknown as Json;
      out.push({ json });
      send?.('end', i);
    }
    return output(out);
  },
});
