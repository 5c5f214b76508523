import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { LANGCHAIN, type OutputParser, requiredPart } from '../ai-parts.js';
import { NAIVE_FIX_TEMPLATE } from '../structured-output.js';

const Parameters = Type.Object(
  {
    info: Type.Optional(Type.String()),
    notice: Type.Optional(Type.String()),
    options: Type.Object(
      { prompt: Type.Optional(Type.String({ maxLength: 100_000 })) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/**
 * n8n's Auto-fixing Output Parser (v1, deprecated in n8n for the Structured Output Parser's own
 * auto-fix, still in exports): wraps the attached output parser; an answer that does not parse is sent to
 * the attached model once with the retry prompt (`{instructions}`, `{completion}`, `{error}`) and the
 * repaired answer must parse.
 */
export const outputParserAutofixingNode = defineSubNode({
  type: `${LANGCHAIN}.outputParserAutofixing`,
  versions: [1],
  schema: Parameters,
  subNode: 'ai_outputParser',
  aiInputs: ['ai_languageModel', 'ai_outputParser'],
  async supply(ctx, itemIndex): Promise<OutputParser> {
    const p = await ctx.params(itemIndex);
    const prompt = p.options.prompt ?? NAIVE_FIX_TEMPLATE;
    if (prompt.length === 0 || !prompt.includes('{error}'))
      throw new NodeOperationError('Auto-fixing parser prompt has to contain {error} placeholder');
    const model = await requiredPart(ctx.subNodes('ai_languageModel'), itemIndex, 'chatModel', 'Chat Model');
    const inner = await requiredPart(
      ctx.subNodes('ai_outputParser'),
      itemIndex,
      'outputParser',
      'Output Parser',
    );
    return {
      kind: 'outputParser',
      schema: inner.schema,
      parse: inner.parse,
      fixWith: model,
      fixPrompt: prompt,
    };
  },
});
