import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { CREDENTIAL_HEADERS, openAiTarget } from '../../n8n/open-ai/transport.js';
import { LANGCHAIN, locatorValue } from '../ai-parts.js';
import { openAiWireModel } from '../openai-wire.js';

const Locator = Type.Object(
  {
    __rl: Type.Optional(Type.Boolean()),
    mode: Type.Optional(Type.String()),
    value: Type.String(),
    cachedResultName: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** n8n's lmChatOpenAi options (v1–1.2). */
const Options = Type.Object(
  {
    baseURL: Type.Optional(Type.String()),
    frequencyPenalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    maxTokens: Type.Optional(Type.Integer({ minimum: -1, maximum: 1_000_000 })),
    responseFormat: Type.Optional(Type.Enum(['text', 'json_object'] as const)),
    presencePenalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 300_000 })),
    maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
    topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    reasoningEffort: Type.Optional(Type.Enum(['low', 'medium', 'high'] as const)),
  },
  { additionalProperties: false, default: {} },
);

const Parameters = Type.Object(
  {
    model: Type.Union([Type.String({ minLength: 1 }), Locator], { default: 'gpt-4o-mini' }),
    /** v1.3: n8n answers on the Responses API unless this is off. */
    responsesApiEnabled: Type.Boolean({ default: true }),
    builtInTools: Type.Optional(Type.Object({}, { additionalProperties: true })),
    options: Options,
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * n8n's OpenAI Chat Model. Its `openAiApi` credential names the server: OpenAI itself, any compatible one,
 * or this platform's gateway (`url` = the platform's `/v1`, `apiKey` = a platform key): then the model is
 * one of the registry, charged to that key's token budget and logged in `GET /v1/llm/requests`.
 */
export const lmChatOpenAiNode = defineSubNode({
  type: `${LANGCHAIN}.lmChatOpenAi`,
  versions: [1, 1.1, 1.2, 1.3],
  schema: Parameters,
  subNode: 'ai_languageModel',
  async supply(ctx, itemIndex) {
    const p = await ctx.params(itemIndex);
    if ((ctx.node.typeVersion ?? 1) >= 1.3 && p.responsesApiEnabled)
      throw new NodeOperationError("OpenAI's Responses API is not supported here", {
        description: "Turn off the model's 'Use Responses API' option to use Chat Completions",
      });
    const { base, headers } = await openAiTarget(ctx.node, (id) => ctx.credential(id), p.options.baseURL);
    const o = p.options;
    const body: Record<string, unknown> = {};
    if (o.temperature !== undefined) body.temperature = o.temperature;
    if (o.topP !== undefined) body.top_p = o.topP;
    if (o.frequencyPenalty !== undefined) body.frequency_penalty = o.frequencyPenalty;
    if (o.presencePenalty !== undefined) body.presence_penalty = o.presencePenalty;
    if (o.maxTokens !== undefined && o.maxTokens > 0) body.max_tokens = o.maxTokens;
    if (o.responseFormat === 'json_object') body.response_format = { type: 'json_object' };
    if (o.reasoningEffort !== undefined) body.reasoning_effort = o.reasoningEffort;
    return openAiWireModel(ctx.deps, {
      label: 'OpenAI',
      url: `${base}/chat/completions`,
      headers,
      credentialHeaders: CREDENTIAL_HEADERS,
      model: locatorValue(p.model),
      body,
      timeoutMs: o.timeout ?? DEFAULT_TIMEOUT_MS,
    });
  },
});
