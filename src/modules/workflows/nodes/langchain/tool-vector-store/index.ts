import { Type } from 'typebox';
import { defineSubNode } from '../../../engine/node-type.js';
import { type AiTool, LANGCHAIN, requiredPart } from '../ai-parts.js';
import { askText, documentsText } from '../ask.js';
import { toolNameOf } from '../from-ai.js';

/** LangChain's VectorDBQA prompt, which n8n's Vector Store Question Answer tool answers with. */
const QA_SYSTEM = `Use the following pieces of context to answer the users question. 
If you don't know the answer, just say that you don't know, don't try to make up an answer.
----------------
`;

/**
 * n8n's Vector Store Question Answer Tool: the model's question answered by the attached chat model from
 * the `topK` documents of the attached vector store (v1 named by `name`, later by the node's name).
 */
export const toolVectorStoreNode = defineSubNode({
  type: `${LANGCHAIN}.toolVectorStore`,
  versions: [1, 1.1],
  schema: Type.Object(
    {
      name: Type.String({ default: '', maxLength: 64 }),
      description: Type.String({ default: '', maxLength: 10_000 }),
      topK: Type.Integer({ minimum: 1, maximum: 1_000, default: 4 }),
      notice: Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  ),
  subNode: 'ai_tool',
  aiInputs: ['ai_vectorStore', 'ai_languageModel'],
  async supply(ctx, itemIndex): Promise<AiTool> {
    const p = await ctx.params(itemIndex);
    const store = await requiredPart(
      ctx.subNodes('ai_vectorStore'),
      itemIndex,
      'vectorStore',
      'Vector Store',
    );
    const model = await requiredPart(ctx.subNodes('ai_languageModel'), itemIndex, 'chatModel', 'Chat Model');
    const name = toolNameOf((ctx.node.typeVersion ?? 1) < 1.1 && p.name ? p.name : ctx.node.name);
    return {
      kind: 'tool',
      name,
      description: `Useful for when you need to answer questions about ${name}. Whenever you need information about ${p.description}, you should ALWAYS use this. Input should be a fully formed question.`,
      parameters: {
        type: 'object',
        properties: { input: { type: 'string', description: 'A fully formed question' } },
        required: ['input'],
      },
      async run(args) {
        if (typeof args.input !== 'string') throw new Error("the argument 'input' must be text");
        const found = await store.search(args.input, p.topK);
        return askText(model, [
          { role: 'system', content: QA_SYSTEM + documentsText(found.map((f) => f.document)) },
          { role: 'user', content: args.input },
        ]);
      },
    };
  },
});
