import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { credentialRefOf } from '../../../engine/types.js';
import { LANGCHAIN, locatorValue } from '../ai-parts.js';
import { anthropicModel } from '../anthropic-wire.js';

const Locator = Type.Object(
  {
    __rl: Type.Optional(Type.Boolean()),
    mode: Type.Optional(Type.String()),
    value: Type.String(),
    cachedResultName: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** n8n's lmChatAnthropic options (v1–1.3). */
const Options = Type.Object(
  {
    maxTokensToSample: Type.Optional(Type.Integer({ minimum: 1, maximum: 200_000 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    topK: Type.Optional(Type.Integer({ minimum: -1, maximum: 1_000 })),
    topP: Type.Optional(Type.Number({ minimum: -1, maximum: 1 })),
    thinking: Type.Optional(Type.Boolean()),
    thinkingBudget: Type.Optional(Type.Integer({ minimum: 1_024, maximum: 200_000 })),
  },
  { additionalProperties: false, default: {} },
);

const Parameters = Type.Object(
  {
    model: Type.Union([Type.String({ minLength: 1 }), Locator], { default: 'claude-sonnet-4-5-20250929' }),
    options: Options,
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const DEFAULT_URL = 'https://api.anthropic.com';

/**
 * n8n's Anthropic Chat Model: the Messages API with the `anthropicApi` credential (`apiKey`, and `url` for
 * a proxy or a compatible server), through the outbound guard.
 */
export const lmChatAnthropicNode = defineSubNode({
  type: `${LANGCHAIN}.lmChatAnthropic`,
  versions: [1, 1.1, 1.2, 1.3],
  schema: Parameters,
  subNode: 'ai_languageModel',
  async supply(ctx, itemIndex) {
    const p = await ctx.params(itemIndex);
    const credId = credentialRefOf(ctx.node.credentials?.anthropicApi);
    if (!credId) throw new NodeOperationError('No anthropicApi credential is set on the node');
    const cred = await ctx.credential(credId);
    const base = (cred.url || DEFAULT_URL).replace(/\/+$/, '').replace(/\/v1$/, '');
    if (!/^https?:\/\//.test(base)) throw new NodeOperationError(`The base URL '${base}' is not http(s)`);
    const o = p.options;
    const body: Record<string, unknown> = {};
    if (o.maxTokensToSample !== undefined) body.max_tokens = o.maxTokensToSample;
    if (o.thinking) {
      const budget = o.thinkingBudget ?? 1_024;
      body.thinking = { type: 'enabled', budget_tokens: budget };
      body.max_tokens = Math.max(Number(body.max_tokens ?? 4_096), budget + 1);
    } else {
      if (o.temperature !== undefined) body.temperature = o.temperature;
      if (o.topK !== undefined && o.topK > 0) body.top_k = o.topK;
      if (o.topP !== undefined && o.topP > 0) body.top_p = o.topP;
    }
    return anthropicModel(ctx.deps, {
      base,
      apiKey: cred.apiKey ?? '',
      model: locatorValue(p.model),
      body,
      timeoutMs: 60_000,
    });
  },
});
