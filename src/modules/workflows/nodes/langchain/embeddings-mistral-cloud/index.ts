import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { credentialRefOf } from '../../../engine/types.js';
import { type Embeddings, LANGCHAIN } from '../ai-parts.js';
import { wireEmbeddings } from '../embeddings-wire.js';
import { baseUrlOf } from '../model-params.js';

const Parameters = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200, default: 'mistral-embed' }),
    options: Type.Object(
      {
        batchSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_048 })),
        stripNewLines: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/**
 * n8n's Embeddings Mistral (embeddingsMistralCloud, LangChain's MistralAIEmbeddings): `POST {url}/embeddings`
 * on Mistral's API — OpenAI's request and answer shape — with the `mistralCloudApi` key as a bearer token,
 * in batches of `batchSize` texts (512), new lines replaced by spaces unless `stripNewLines` is off.
 */
export const embeddingsMistralCloudNode = defineSubNode({
  type: `${LANGCHAIN}.embeddingsMistralCloud`,
  versions: [1],
  schema: Parameters,
  subNode: 'ai_embedding',
  async supply(ctx, itemIndex): Promise<Embeddings> {
    const p = await ctx.params(itemIndex);
    const credId = credentialRefOf(ctx.node.credentials?.mistralCloudApi);
    if (!credId) throw new NodeOperationError('No mistralCloudApi credential is set on the node');
    const cred = await ctx.credential(credId);
    return wireEmbeddings(ctx.deps, {
      label: 'Mistral',
      // The same base as the Mistral Cloud Chat Model: Mistral's API, or the credential's `url`.
      url: `${baseUrlOf(cred.url, 'https://api.mistral.ai/v1')}/embeddings`,
      headers: cred.apiKey ? { authorization: `Bearer ${cred.apiKey}` } : {},
      credentialHeaders: ['authorization'],
      model: p.model,
      body: {},
      batchSize: p.options.batchSize ?? 512,
      stripNewLines: p.options.stripNewLines ?? true,
      timeoutMs: 60_000,
      wire: 'openai',
    });
  },
});
