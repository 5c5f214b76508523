import { Type } from 'typebox';
import { defineSubNode } from '../../../engine/node-type.js';
import { LANGCHAIN, type Retriever, requiredPart } from '../ai-parts.js';

/** n8n's Vector Store Retriever: the `topK` documents of the attached store nearest a query. */
export const retrieverVectorStoreNode = defineSubNode({
  type: `${LANGCHAIN}.retrieverVectorStore`,
  versions: [1],
  schema: Type.Object(
    { topK: Type.Integer({ minimum: 1, maximum: 1_000, default: 4 }), notice: Type.Optional(Type.String()) },
    { additionalProperties: false },
  ),
  subNode: 'ai_retriever',
  aiInputs: ['ai_vectorStore'],
  async supply(ctx, itemIndex): Promise<Retriever> {
    const p = await ctx.params(itemIndex);
    const store = await requiredPart(
      ctx.subNodes('ai_vectorStore'),
      itemIndex,
      'vectorStore',
      'Vector Store',
    );
    return {
      kind: 'retriever',
      retrieve: async (query) => (await store.search(query, p.topK)).map((r) => r.document),
    };
  },
});
