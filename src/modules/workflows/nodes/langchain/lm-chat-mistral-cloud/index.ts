import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { credentialRefOf } from '../../../engine/types.js';
import { LANGCHAIN } from '../ai-parts.js';
import { baseUrlOf, positiveOrNone } from '../model-params.js';
import { openAiWireModel } from '../openai-wire.js';

/** n8n's lmChatMistralCloud options (v1; LangChain's ChatMistralAI fields). */
const Options = Type.Object(
  {
    maxTokens: Type.Optional(Type.Integer({ minimum: -1, maximum: 1_000_000 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1.5 })),
    maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
    topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    safeMode: Type.Optional(Type.Boolean()),
    randomSeed: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
  },
  { additionalProperties: false, default: {} },
);

const Parameters = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300, default: 'mistral-small' }),
    options: Options,
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/**
 * n8n's Mistral Cloud Chat Model: `POST {url}/chat/completions` on Mistral's API (OpenAI's shape, tool
 * results carrying the tool's name) with the `mistralCloudApi` credential as a bearer token. n8n's
 * options in Mistral's names: `max_tokens`, `top_p`, `safe_prompt`, `random_seed`.
 */
export const lmChatMistralCloudNode = defineSubNode({
  type: `${LANGCHAIN}.lmChatMistralCloud`,
  versions: [1],
  schema: Parameters,
  subNode: 'ai_languageModel',
  async supply(ctx, itemIndex) {
    const p = await ctx.params(itemIndex);
    const credId = credentialRefOf(ctx.node.credentials?.mistralCloudApi);
    if (!credId) throw new NodeOperationError('No mistralCloudApi credential is set on the node');
    const cred = await ctx.credential(credId);
    const o = p.options;
    const body: Record<string, unknown> = {};
    if (o.temperature !== undefined) body.temperature = o.temperature;
    if (o.topP !== undefined) body.top_p = o.topP;
    const maxTokens = positiveOrNone(o.maxTokens);
    if (maxTokens !== undefined) body.max_tokens = maxTokens;
    if (o.safeMode) body.safe_prompt = true;
    if (typeof o.randomSeed === 'number') body.random_seed = o.randomSeed;
    return openAiWireModel(ctx.deps, {
      label: 'Mistral',
      url: `${baseUrlOf(cred.url, 'https://api.mistral.ai/v1')}/chat/completions`,
      headers: cred.apiKey ? { authorization: `Bearer ${cred.apiKey}` } : {},
      credentialHeaders: ['authorization'],
      model: p.model,
      body,
      timeoutMs: 60_000,
      toolResultNames: true,
    });
  },
});
