import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { credentialRefOf } from '../../../engine/types.js';
import { LANGCHAIN } from '../ai-parts.js';
import { geminiModel } from '../gemini-wire.js';
import { baseUrlOf } from '../model-params.js';

const HARM_CATEGORIES = [
  'HARM_CATEGORY_UNSPECIFIED',
  'HARM_CATEGORY_HARASSMENT',
  'HARM_CATEGORY_HATE_SPEECH',
  'HARM_CATEGORY_SEXUALLY_EXPLICIT',
  'HARM_CATEGORY_DANGEROUS_CONTENT',
] as const;
const HARM_THRESHOLDS = [
  'HARM_BLOCK_THRESHOLD_UNSPECIFIED',
  'BLOCK_LOW_AND_ABOVE',
  'BLOCK_MEDIUM_AND_ABOVE',
  'BLOCK_ONLY_HIGH',
  'BLOCK_NONE',
] as const;

const SafetySetting = Type.Object(
  {
    category: Type.Enum(HARM_CATEGORIES, { default: 'HARM_CATEGORY_UNSPECIFIED' }),
    threshold: Type.Enum(HARM_THRESHOLDS, { default: 'HARM_BLOCK_THRESHOLD_UNSPECIFIED' }),
  },
  { additionalProperties: false },
);

/** n8n's Gemini options (gemini-common/additional-options). */
const Options = Type.Object(
  {
    maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    topK: Type.Optional(Type.Number({ minimum: -1, maximum: 1_000 })),
    topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    safetySettings: Type.Optional(
      Type.Object(
        { values: Type.Union([Type.Array(SafetySetting, { maxItems: 20 }), SafetySetting]) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, default: {} },
);

const Parameters = Type.Object(
  {
    modelName: Type.String({ minLength: 1, maxLength: 300, default: 'models/gemini-2.5-flash' }),
    options: Options,
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/**
 * n8n's Google Gemini Chat Model with its `googlePalmApi` credential (`host`, `apiKey`): Gemini's own
 * generateContent format (gemini-wire.ts), n8n's options as `generationConfig` and `safetySettings`.
 */
export const lmChatGoogleGeminiNode = defineSubNode({
  type: `${LANGCHAIN}.lmChatGoogleGemini`,
  versions: [1],
  schema: Parameters,
  subNode: 'ai_languageModel',
  async supply(ctx, itemIndex) {
    const p = await ctx.params(itemIndex);
    const credId = credentialRefOf(ctx.node.credentials?.googlePalmApi);
    if (!credId) throw new NodeOperationError('No googlePalmApi credential is set on the node');
    const cred = await ctx.credential(credId);
    const o = p.options;
    const generationConfig: Record<string, unknown> = {};
    if (o.maxOutputTokens !== undefined) generationConfig.maxOutputTokens = o.maxOutputTokens;
    if (o.temperature !== undefined) generationConfig.temperature = o.temperature;
    // -1 turns top-K off (n8n's description), as an absent field does.
    if (o.topK !== undefined && o.topK > 0) generationConfig.topK = Math.round(o.topK);
    if (o.topP !== undefined) generationConfig.topP = o.topP;
    const values = o.safetySettings?.values;
    const safety = (Array.isArray(values) ? values : values ? [values] : []).filter(
      (s) => s.category !== 'HARM_CATEGORY_UNSPECIFIED',
    );
    return geminiModel(ctx.deps, {
      host: baseUrlOf(cred.host, 'https://generativelanguage.googleapis.com'),
      apiKey: cred.apiKey ?? '',
      model: p.modelName,
      generationConfig,
      safetySettings: safety,
      timeoutMs: 60_000,
    });
  },
});
