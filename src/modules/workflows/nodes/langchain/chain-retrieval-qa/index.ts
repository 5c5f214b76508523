import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { LANGCHAIN, requiredPart } from '../ai-parts.js';
import { askText, documentsText, fillTemplate } from '../ask.js';

/** n8n's default system prompt (ChainRetrievalQA/constants.ts). */
export const SYSTEM_PROMPT_TEMPLATE = `You are an assistant for question-answering tasks. Use the following pieces of retrieved context to answer the question.
If you don't know the answer, just say that you don't know, don't try to make up an answer.
----------------
Context: {context}`;

const Parameters = Type.Object(
  {
    /** v1–1.2: the question. */
    query: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    promptType: Type.Enum(['auto', 'define'] as const, { default: 'auto' }),
    text: Type.String({ default: '', maxLength: 1_000_000 }),
    options: Type.Object(
      { systemPromptTemplate: Type.Optional(Type.String({ maxLength: 100_000 })) },
      { additionalProperties: false, default: {} },
    ),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** v1's default query per version (n8n's `query` parameter defaults). */
const QUERY_DEFAULT: Record<string, string> = { '1': 'input', '1.1': 'chat_input', '1.2': 'chatInput' };

/**
 * n8n's Question and Answer Chain: per item, the attached retriever's documents for the question, then
 * one call of the attached chat model — the system prompt with `{context}` filled, the question as the
 * user's turn. v1.5+ answers `{response: text}`, earlier versions `{response: {text}}`.
 */
export const chainRetrievalQaNode = defineNode({
  type: `${LANGCHAIN}.chainRetrievalQa`,
  versions: [1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7],
  schema: Parameters,
  aiInputs: ['ai_languageModel', 'ai_retriever'],
  async execute(ctx) {
    const version = ctx.node.typeVersion ?? 1;
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      try {
        const p = await ctx.params(i);
        const json = ctx.items[i]?.json ?? {};
        const query =
          version <= 1.2
            ? (p.query ?? json[QUERY_DEFAULT[String(version)] ?? 'chatInput'])
            : p.promptType === 'auto'
              ? json.chatInput
              : p.text;
        if (typeof query !== 'string' || query === '')
          throw new NodeOperationError(
            version <= 1.2 ? 'The ‘query‘ parameter is empty.' : 'No prompt specified',
            {
              description:
                version > 1.2 && p.promptType === 'auto'
                  ? "Expected to find the prompt in an input field called 'chatInput' (this is what the chat trigger node outputs)"
                  : 'Set the question to ask',
            },
          );
        const model = await requiredPart(ctx.subNodes('ai_languageModel'), i, 'chatModel', 'Chat Model');
        const retriever = await requiredPart(ctx.subNodes('ai_retriever'), i, 'retriever', 'Retriever');
        const documents = await retriever.retrieve(query);
        let template = p.options.systemPromptTemplate ?? SYSTEM_PROMPT_TEMPLATE;
        // Before 1.5 the template named the question {question}.
        if (version < 1.5) template = template.replace('{question}', '{input}');
        const system = fillTemplate(template, { context: documentsText(documents), input: query });
        const text = await askText(model, [
          { role: 'system', content: system },
          { role: 'user', content: query },
        ]);
        out.push({ json: { response: version >= 1.5 ? text : { text } }, pairedItem: { item: i } });
      } catch (error) {
        if (ctx.node.continueOnFail !== true) throw error;
        out.push({ json: { error: (error as Error).message }, pairedItem: { item: i } });
      }
    }
    return output(out);
  },
});
