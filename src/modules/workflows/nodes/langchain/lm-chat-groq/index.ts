import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { credentialRefOf } from '../../../engine/types.js';
import { LANGCHAIN } from '../ai-parts.js';
import { baseUrlOf, positiveOrNone } from '../model-params.js';
import { openAiWireModel } from '../openai-wire.js';

/** n8n's lmChatGroq options (v1). */
const Options = Type.Object(
  {
    maxTokensToSample: Type.Optional(Type.Integer({ minimum: -1, maximum: 1_000_000 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  },
  { additionalProperties: false, default: {} },
);

const Parameters = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300, default: 'llama3-8b-8192' }),
    options: Options,
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/**
 * n8n's Groq Chat Model: Groq's OpenAI-compatible `POST {url}/chat/completions`
 * (`https://api.groq.com/openai/v1`) with the `groqApi` credential as a bearer token.
 */
export const lmChatGroqNode = defineSubNode({
  type: `${LANGCHAIN}.lmChatGroq`,
  versions: [1],
  schema: Parameters,
  subNode: 'ai_languageModel',
  async supply(ctx, itemIndex) {
    const p = await ctx.params(itemIndex);
    const credId = credentialRefOf(ctx.node.credentials?.groqApi);
    if (!credId) throw new NodeOperationError('No groqApi credential is set on the node');
    const cred = await ctx.credential(credId);
    const body: Record<string, unknown> = {};
    const maxTokens = positiveOrNone(p.options.maxTokensToSample);
    if (maxTokens !== undefined) body.max_tokens = maxTokens;
    if (p.options.temperature !== undefined) body.temperature = p.options.temperature;
    return openAiWireModel(ctx.deps, {
      label: 'Groq',
      url: `${baseUrlOf(cred.url, 'https://api.groq.com/openai/v1')}/chat/completions`,
      headers: cred.apiKey ? { authorization: `Bearer ${cred.apiKey}` } : {},
      credentialHeaders: ['authorization'],
      model: p.model,
      body,
      timeoutMs: 60_000,
    });
  },
});
