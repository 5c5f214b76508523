import { Type } from 'typebox';
import { defineSubNode } from '../../../engine/node-type.js';
import { type AiTool, LANGCHAIN } from '../ai-parts.js';
import { toolNameOf } from '../from-ai.js';

const DEFAULT_DESCRIPTION =
  'Use the tool to think about something. It will not obtain new information or change the database, but just append the thought to the log. Use it when complex reasoning or some cache memory is needed.';

const Parameters = Type.Object(
  {
    notice: Type.Optional(Type.String()),
    description: Type.String({ default: DEFAULT_DESCRIPTION, maxLength: 10_000 }),
  },
  { additionalProperties: false },
);

/** The longest thought handed back to the model (the rest is cut). */
const MAX_THOUGHT = 100_000;

/**
 * n8n's Think Tool (v1, 1.1; Anthropic's "think" tool): the model writes a thought as the tool's
 * `input` and reads it back — nothing else happens. Named `thinking_tool` in v1, after the node from
 * v1.1 (n8n's `nodeNameToToolName`).
 */
export const toolThinkNode = defineSubNode({
  type: `${LANGCHAIN}.toolThink`,
  versions: [1, 1.1],
  schema: Parameters,
  subNode: 'ai_tool',
  async supply(ctx, itemIndex): Promise<AiTool> {
    const p = await ctx.params(itemIndex);
    return {
      kind: 'tool',
      name: (ctx.node.typeVersion ?? 1) === 1 ? 'thinking_tool' : toolNameOf(ctx.node.name),
      description: p.description,
      // LangChain's DynamicTool: one optional text, `input`.
      parameters: { type: 'object', properties: { input: { type: 'string' } } },
      async run(args) {
        const thought = args.input;
        if (thought !== undefined && typeof thought !== 'string')
          throw new Error("the argument 'input' must be text");
        return (thought ?? '').slice(0, MAX_THOUGHT);
      },
    };
  },
});
