import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { credentialRefOf } from '../../../engine/types.js';
import { type Embeddings, LANGCHAIN, locatorValue } from '../ai-parts.js';
import { wireEmbeddings } from '../embeddings-wire.js';

const Parameters = Type.Object(
  {
    model: Type.Union(
      [
        Type.String({ minLength: 1, maxLength: 200 }),
        Type.Object({
          __rl: Type.Optional(Type.Boolean()),
          mode: Type.Optional(Type.String()),
          value: Type.String(),
        }),
      ],
      { default: 'text-embedding-3-small' },
    ),
    options: Type.Object(
      {
        dimensions: Type.Optional(Type.Integer({ minimum: 1, maximum: 16_384 })),
        baseURL: Type.Optional(Type.String({ maxLength: 2_000 })),
        batchSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_048 })),
        stripNewLines: Type.Optional(Type.Boolean()),
        timeout: Type.Optional(Type.Number({ minimum: -1, maximum: 300 })),
        encodingFormat: Type.Optional(Type.String()),
      },
      { additionalProperties: false, default: {} },
    ),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/**
 * n8n's Embeddings OpenAI: `POST {base}/embeddings` with the `openAiApi` credential — OpenAI, a compatible
 * server, or this platform's gateway (`url` = the platform's `/v1`, a platform key: charged and logged).
 */
export const embeddingsOpenAiNode = defineSubNode({
  type: `${LANGCHAIN}.embeddingsOpenAi`,
  versions: [1, 1.1, 1.2],
  schema: Parameters,
  subNode: 'ai_embedding',
  async supply(ctx, itemIndex): Promise<Embeddings> {
    const p = await ctx.params(itemIndex);
    const credId = credentialRefOf(ctx.node.credentials?.openAiApi);
    if (!credId) throw new NodeOperationError('No openAiApi credential is set on the node');
    const cred = await ctx.credential(credId);
    const base = (p.options.baseURL || cred.url || 'https://api.openai.com/v1').replace(/\/+$/, '');
    if (!/^https?:\/\//.test(base)) throw new NodeOperationError(`The base URL '${base}' is not http(s)`);
    const headers: Record<string, string> = {};
    if (cred.apiKey) headers.authorization = `Bearer ${cred.apiKey}`;
    if (cred.organizationId) headers['openai-organization'] = cred.organizationId;
    const timeout = p.options.timeout;
    // n8n describes `model` twice: v1's default is text-embedding-ada-002, later versions' the schema's.
    const model =
      ctx.node.parameters.model === undefined && (ctx.node.typeVersion ?? 1) === 1
        ? 'text-embedding-ada-002'
        : locatorValue(p.model);
    return wireEmbeddings(ctx.deps, {
      label: 'OpenAI',
      url: `${base}/embeddings`,
      headers,
      credentialHeaders: ['authorization', 'openai-organization'],
      model,
      body: p.options.dimensions ? { dimensions: p.options.dimensions } : {},
      batchSize: p.options.batchSize ?? 512,
      stripNewLines: p.options.stripNewLines ?? true,
      timeoutMs: timeout && timeout > 0 ? timeout * 1_000 : 60_000,
      wire: 'openai',
    });
  },
});
