import { Type } from 'typebox';
import type { ChatMessage } from '../../../../llm/index.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { imagesOf } from '../agent/parameters.js';
import { parseOrFix } from '../agent/run-agent.js';
import { LANGCHAIN, supplied } from '../ai-parts.js';

const Message = Type.Object(
  {
    type: Type.Enum(
      ['SystemMessagePromptTemplate', 'AIMessagePromptTemplate', 'HumanMessagePromptTemplate'] as const,
      { default: 'SystemMessagePromptTemplate' },
    ),
    messageType: Type.Optional(Type.Enum(['text', 'imageBinary', 'imageUrl'] as const)),
    message: Type.Optional(Type.String({ maxLength: 100_000 })),
    binaryImageDataKey: Type.Optional(Type.String({ maxLength: 200 })),
    imageUrl: Type.Optional(Type.String({ maxLength: 4_000 })),
    imageDetail: Type.Optional(Type.Enum(['auto', 'low', 'high'] as const)),
  },
  { additionalProperties: false },
);

const Parameters = Type.Object(
  {
    /** v1–1.3: the prompt. */
    prompt: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    promptType: Type.Enum(['auto', 'define', 'guardrails'] as const, { default: 'auto' }),
    text: Type.String({ default: '={{ $json.chatInput }}', maxLength: 1_000_000 }),
    hasOutputParser: Type.Boolean({ default: false }),
    needsFallback: Type.Boolean({ default: false }),
    messages: Type.Object(
      { messageValues: Type.Optional(Type.Array(Message, { maxItems: 100 })) },
      { additionalProperties: false, default: {} },
    ),
    batching: Type.Optional(Type.Object({}, { additionalProperties: true })),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/**
 * n8n's Basic LLM Chain: one model call per item — the chat messages of the node (system, AI, human;
 * images from the item's binary or a URL) then the prompt — answered as `{text}`, or as `{output}`
 * through an attached output parser. A fallback model (input 1) answers when the first fails.
 */
export const chainLlmNode = defineNode({
  type: `${LANGCHAIN}.chainLlm`,
  versions: [1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9],
  schema: Parameters,
  aiInputs: ['ai_languageModel', 'ai_outputParser'],
  async execute(ctx) {
    const out: Item[] = [];
    const old = (ctx.node.typeVersion ?? 1) < 1.4;
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      const json = ctx.items[i]?.json ?? {};
      const prompt = old ? (p.prompt ?? json.input) : p.promptType === 'auto' ? json.chatInput : p.text;
      if (typeof prompt !== 'string' || prompt.trim() === '')
        throw new NodeOperationError('No prompt specified', {
          description: old
            ? "Expected the prompt in the 'prompt' parameter"
            : "Expected to find the prompt in an input field called 'chatInput' (this is what the chat trigger node outputs)",
        });
      const models = ctx.subNodes('ai_languageModel');
      const first = models.find((h) => h.inputIndex === 0) ?? models[0];
      if (!first) throw new NodeOperationError('A Chat Model sub-node must be connected and enabled');
      const model = await supplied(first, i, 'chatModel');
      const fallbackHandle = p.needsFallback ? models.find((h) => h.inputIndex === 1) : undefined;
      const fallback = fallbackHandle ? await supplied(fallbackHandle, i, 'chatModel') : undefined;
      const parserHandle = p.hasOutputParser || old ? ctx.subNodes('ai_outputParser')[0] : undefined;
      const parser = parserHandle ? await supplied(parserHandle, i, 'outputParser') : undefined;

      const messages: ChatMessage[] = [];
      for (const m of p.messages.messageValues ?? []) messages.push(messageOf(m, ctx.items[i]));
      const instructions = parser
        ? `\n\nAnswer with JSON only, meeting this JSON schema: ${JSON.stringify(parser.schema)}`
        : '';
      messages.push({ role: 'user', content: prompt + instructions });
      let answer: Awaited<ReturnType<typeof model.chat>>;
      try {
        answer = await model.chat(messages, undefined);
      } catch (error) {
        if (!fallback) throw error;
        answer = await fallback.chat(messages, undefined);
      }
      let text = '';
      for await (const e of answer.events) if (e.type === 'delta' && e.content) text += e.content;
      if (parser) out.push({ json: { output: (await parseOrFix(parser, text)) as Json } });
      else out.push({ json: { text } });
    }
    return output(out);
  },
});

type MessageParam = {
  type: string;
  messageType?: string;
  message?: string;
  binaryImageDataKey?: string;
  imageUrl?: string;
};

function messageOf(m: MessageParam, item: Item | undefined): ChatMessage {
  const role =
    m.type === 'SystemMessagePromptTemplate'
      ? 'system'
      : m.type === 'AIMessagePromptTemplate'
        ? 'assistant'
        : 'user';
  if (m.messageType === 'imageUrl') {
    if (!m.imageUrl || !/^https?:\/\//.test(m.imageUrl))
      throw new NodeOperationError(`The image URL '${String(m.imageUrl).slice(0, 100)}' is not http(s)`);
    return { role: 'user', content: '', images: [m.imageUrl] };
  }
  if (m.messageType === 'imageBinary') {
    const key = m.binaryImageDataKey || 'data';
    const file = item?.binary?.[key];
    if (!file) throw new NodeOperationError(`The item has no binary property '${key}' for the image message`);
    return { role: 'user', content: '', images: imagesOf({ json: {}, binary: { [key]: file } }) };
  }
  return { role, content: m.message ?? '' };
}
