import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import type { Embeddings } from '../../langchain/ai-parts.js';

const Parameters = Type.Object(
  {
    /** A built-in embedding model of the registry. */
    model: Type.String({ minLength: 1, maxLength: 200, default: 'builtin/hashed-ngrams' }),
    options: Type.Object(
      { batchSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_048 })) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** Texts one node supplies to a store at most per call (each batch is one gateway call). */
const MAX_TEXTS = 20_000;

/**
 * The platform's built-in embedders as an n8n embeddings sub-node (`ai_embedding`):
 * `builtin/hashed-ngrams` (lexical, instant, the knowledge base's default) or `builtin/use-lite`
 * (semantic, where its packages are installed), through the gateway as the workflow's account
 * (recorded in its request log; no server, no key, no download). For the Simple Vector Store, PGVector
 * and any other store taking `ai_embedding`.
 */
export const embeddingsBuiltinNode = defineSubNode({
  type: 'n8n-nodes-platform.embeddingsBuiltin',
  schema: Parameters,
  subNode: 'ai_embedding',
  async supply(ctx, itemIndex): Promise<Embeddings> {
    const p = await ctx.params(itemIndex);
    const ai = ctx.deps.platformAi;
    if (!ai) throw new NodeOperationError('The built-in embedders are not available to workflows here');
    if (!p.model.startsWith('builtin/'))
      throw new NodeOperationError(`'${p.model}' is not a built-in embedding model`, {
        description: "Use 'builtin/hashed-ngrams' or 'builtin/use-lite'",
      });
    const batch = p.options.batchSize ?? 512;
    const embed = async (texts: string[]): Promise<number[][]> => {
      if (texts.length > MAX_TEXTS)
        throw new NodeOperationError(`At most ${MAX_TEXTS} texts are embedded at once`);
      const out: number[][] = [];
      for (let i = 0; i < texts.length; i += batch) {
        try {
          out.push(...(await ai.embed(texts.slice(i, i + batch), p.model)));
        } catch (err) {
          throw new NodeOperationError(`Built-in embeddings failed: ${(err as Error).message}`);
        }
      }
      return out;
    };
    return {
      kind: 'embeddings',
      embedDocuments: embed,
      async embedQuery(text) {
        const [vector] = await embed([text]);
        if (!vector) throw new NodeOperationError('The built-in embedder answered no vector');
        return vector;
      },
    };
  },
});
