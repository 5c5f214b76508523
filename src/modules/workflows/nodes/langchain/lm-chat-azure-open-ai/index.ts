import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { credentialRefOf } from '../../../engine/types.js';
import { LANGCHAIN } from '../ai-parts.js';
import { baseUrlOf, positiveOrNone } from '../model-params.js';
import { openAiWireModel, safeParse } from '../openai-wire.js';

/** n8n's lmChatAzureOpenAi options (v1). */
const Options = Type.Object(
  {
    frequencyPenalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    maxTokens: Type.Optional(Type.Integer({ minimum: -1, maximum: 1_000_000 })),
    responseFormat: Type.Optional(Type.Enum(['text', 'json_object'] as const)),
    presencePenalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 300_000 })),
    maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
    topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    /** A JSON object of further body fields (n8n's "Extra Body"). */
    extraBody: Type.Optional(Type.String({ maxLength: 20_000 })),
  },
  { additionalProperties: false, default: {} },
);

const Parameters = Type.Object(
  {
    authentication: Type.Enum(['azureOpenAiApi', 'azureEntraCognitiveServicesOAuth2Api'] as const, {
      default: 'azureOpenAiApi',
    }),
    /** The deployment name. */
    model: Type.String({ minLength: 1, maxLength: 300 }),
    options: Options,
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** Fields the node sets itself: an Extra Body may not replace them. */
const OWN_FIELDS = new Set(['model', 'messages', 'tools', 'stream']);
/** Azure's reasoning deployments take `max_completion_tokens` (LangChain maps it by model name). */
const REASONING = /^(o\d|gpt-5)/;

/**
 * n8n's Azure OpenAI Chat Model with its `azureOpenAiApi` credential: the deployment's
 * `/openai/deployments/{model}/chat/completions?api-version=…` on `https://{resourceName}.openai.azure.com`
 * or the credential's `endpoint`, or a Foundry endpoint's OpenAI-compatible `/chat/completions`; the key
 * in the `api-key` header. Entra ID (OAuth2) is refused by name.
 */
export const lmChatAzureOpenAiNode = defineSubNode({
  type: `${LANGCHAIN}.lmChatAzureOpenAi`,
  versions: [1],
  schema: Parameters,
  subNode: 'ai_languageModel',
  async supply(ctx, itemIndex) {
    const p = await ctx.params(itemIndex);
    if (p.authentication !== 'azureOpenAiApi')
      throw new NodeOperationError('Azure Entra ID (OAuth2) authentication is not supported here', {
        description: "Use the 'API Key' authentication with an azureOpenAiApi credential",
      });
    const credId = credentialRefOf(ctx.node.credentials?.azureOpenAiApi);
    if (!credId) throw new NodeOperationError('No azureOpenAiApi credential is set on the node');
    const cred = await ctx.credential(credId);
    if (!cred.apiKey)
      throw new NodeOperationError('API Key is missing in the selected Azure OpenAI API credential');
    const deployment = p.model.trim();
    let url: string;
    if (cred.endpointType === 'foundry') {
      if (!cred.foundryEndpoint)
        throw new NodeOperationError(
          'Foundry endpoint is missing in the selected Azure OpenAI API credential',
        );
      url = `${baseUrlOf(cred.foundryEndpoint, '')}/chat/completions`;
    } else {
      const resource = cred.resourceName?.trim() ?? '';
      const version = cred.apiVersion?.trim() ?? '';
      if (!version || (!resource && !cred.endpoint))
        throw new NodeOperationError(
          'Resource Name and API Version are required for a classic Azure OpenAI credential',
        );
      if (resource && !/^[A-Za-z0-9-]{1,64}$/.test(resource))
        throw new NodeOperationError(`The resource name '${resource}' is not an Azure resource name`);
      const base = baseUrlOf(cred.endpoint, `https://${resource}.openai.azure.com`).replace(/\/openai$/, '');
      url = `${base}/openai/deployments/${encodeURIComponent(deployment)}/chat/completions?api-version=${encodeURIComponent(version)}`;
    }
    const o = p.options;
    const body: Record<string, unknown> = {};
    if (o.extraBody?.trim()) {
      const extra = safeParse(o.extraBody);
      if (!extra || typeof extra !== 'object' || Array.isArray(extra))
        throw new NodeOperationError('The Extra Body option must be a JSON object');
      for (const [k, v] of Object.entries(extra)) if (!OWN_FIELDS.has(k)) body[k] = v;
    }
    if (o.temperature !== undefined) body.temperature = o.temperature;
    if (o.topP !== undefined) body.top_p = o.topP;
    if (o.frequencyPenalty !== undefined) body.frequency_penalty = o.frequencyPenalty;
    if (o.presencePenalty !== undefined) body.presence_penalty = o.presencePenalty;
    const maxTokens = positiveOrNone(o.maxTokens);
    if (maxTokens !== undefined)
      body[REASONING.test(deployment) ? 'max_completion_tokens' : 'max_tokens'] = maxTokens;
    if (o.responseFormat === 'json_object') body.response_format = { type: 'json_object' };
    return openAiWireModel(ctx.deps, {
      label: 'Azure OpenAI',
      url,
      headers: { 'api-key': cred.apiKey },
      credentialHeaders: ['api-key'],
      model: deployment,
      body,
      timeoutMs: o.timeout ?? 60_000,
    });
  },
});
