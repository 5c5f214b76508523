import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { credentialRefOf } from '../../../engine/types.js';
import { LANGCHAIN } from '../ai-parts.js';
import { baseUrlOf, positiveOrNone } from '../model-params.js';
import { openAiWireModel } from '../openai-wire.js';

/** OpenRouter's provider routing (n8n's `providerRouting` option). */
const ProviderRouting = Type.Object(
  {
    order: Type.Optional(Type.String({ maxLength: 2_000 })),
    allowFallbacks: Type.Optional(Type.Boolean()),
    requireParameters: Type.Optional(Type.Boolean()),
    dataCollection: Type.Optional(Type.Enum(['allow', 'deny'] as const)),
    zdr: Type.Optional(Type.Boolean()),
    only: Type.Optional(Type.String({ maxLength: 2_000 })),
    ignore: Type.Optional(Type.String({ maxLength: 2_000 })),
    sort: Type.Optional(Type.Enum(['', 'price', 'throughput', 'latency'] as const)),
  },
  { additionalProperties: false },
);

/** n8n's lmChatOpenRouter options (v1; `baseURL` from its first description). */
const Options = Type.Object(
  {
    baseURL: Type.Optional(Type.String({ maxLength: 2_000 })),
    frequencyPenalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    maxTokens: Type.Optional(Type.Integer({ minimum: -1, maximum: 1_000_000 })),
    responseFormat: Type.Optional(Type.Enum(['text', 'json_object'] as const)),
    presencePenalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
    maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
    topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    providerRouting: Type.Optional(ProviderRouting),
  },
  { additionalProperties: false, default: {} },
);

const Parameters = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300, default: 'openai/gpt-4.1-mini' }),
    options: Options,
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const slugs = (text: string | undefined) =>
  (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * n8n's OpenRouter Chat Model: OpenRouter's OpenAI-compatible `POST {url}/chat/completions` with the
 * `openRouterApi` credential (`apiKey`, `url`), provider routing sent as OpenRouter's `provider` object.
 */
export const lmChatOpenRouterNode = defineSubNode({
  type: `${LANGCHAIN}.lmChatOpenRouter`,
  versions: [1],
  schema: Parameters,
  subNode: 'ai_languageModel',
  async supply(ctx, itemIndex) {
    const p = await ctx.params(itemIndex);
    const credId = credentialRefOf(ctx.node.credentials?.openRouterApi);
    if (!credId) throw new NodeOperationError('No openRouterApi credential is set on the node');
    const cred = await ctx.credential(credId);
    const o = p.options;
    const body: Record<string, unknown> = {};
    if (o.temperature !== undefined) body.temperature = o.temperature;
    if (o.topP !== undefined) body.top_p = o.topP;
    if (o.frequencyPenalty !== undefined) body.frequency_penalty = o.frequencyPenalty;
    if (o.presencePenalty !== undefined) body.presence_penalty = o.presencePenalty;
    const maxTokens = positiveOrNone(o.maxTokens);
    if (maxTokens !== undefined) body.max_tokens = maxTokens;
    if (o.responseFormat === 'json_object') body.response_format = { type: 'json_object' };
    const r = o.providerRouting;
    if (r) {
      const provider: Record<string, unknown> = {};
      if (slugs(r.order).length) provider.order = slugs(r.order);
      if (r.allowFallbacks !== undefined) provider.allow_fallbacks = r.allowFallbacks;
      if (r.requireParameters !== undefined) provider.require_parameters = r.requireParameters;
      if (r.dataCollection) provider.data_collection = r.dataCollection;
      if (r.zdr !== undefined) provider.zdr = r.zdr;
      if (slugs(r.only).length) provider.only = slugs(r.only);
      if (slugs(r.ignore).length) provider.ignore = slugs(r.ignore);
      if (r.sort) provider.sort = r.sort;
      if (Object.keys(provider).length > 0) body.provider = provider;
    }
    return openAiWireModel(ctx.deps, {
      label: 'OpenRouter',
      url: `${baseUrlOf(o.baseURL || cred.url, 'https://openrouter.ai/api/v1')}/chat/completions`,
      headers: cred.apiKey ? { authorization: `Bearer ${cred.apiKey}` } : {},
      credentialHeaders: ['authorization'],
      model: p.model,
      body,
      timeoutMs: Math.min(o.timeout ?? 360_000, 600_000),
    });
  },
});
