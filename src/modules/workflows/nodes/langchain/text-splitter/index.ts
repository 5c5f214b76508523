import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { LANGCHAIN, type TextSplitter } from '../ai-parts.js';
import { splitCharacter, splitRecursive } from './split.js';
import { splitTokens } from './token.js';

const Size = Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1000 });
/**
 * n8n's number field; some exports carry `{}` there (an editor artefact n8n passes on to LangChain,
 * whose comparisons then never see an overlap): read as the default, none.
 */
const Overlap = Type.Union(
  [Type.Integer({ minimum: 0, maximum: 1_000_000 }), Type.Object({}, { additionalProperties: false })],
  { default: 0 },
);
const overlapOf = (value: number | object): number => (typeof value === 'number' ? value : 0);

/** n8n's Recursive Character Text Splitter (code-language separators are not offered: plain text's are used). */
export const textSplitterRecursiveNode = defineSubNode({
  type: `${LANGCHAIN}.textSplitterRecursiveCharacterTextSplitter`,
  versions: [1],
  schema: Type.Object(
    {
      chunkSize: Size,
      chunkOverlap: Overlap,
      options: Type.Object(
        { splitCode: Type.Optional(Type.String({ maxLength: 50 })) },
        { additionalProperties: false, default: {} },
      ),
      notice: Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  ),
  subNode: 'ai_textSplitter',
  async supply(ctx, itemIndex): Promise<TextSplitter> {
    const p = await ctx.params(itemIndex);
    if (p.options.splitCode)
      throw new NodeOperationError(
        `Splitting code ('${p.options.splitCode}') is not supported here: remove the option`,
      );
    const o = { chunkSize: p.chunkSize, chunkOverlap: overlapOf(p.chunkOverlap) };
    return { kind: 'textSplitter', split: (text) => splitRecursive(text, o) };
  },
});

/** n8n's Character Text Splitter: on one separator, merged into chunks. */
export const textSplitterCharacterNode = defineSubNode({
  type: `${LANGCHAIN}.textSplitterCharacterTextSplitter`,
  versions: [1],
  schema: Type.Object(
    {
      separator: Type.String({ default: '', maxLength: 100 }),
      chunkSize: Size,
      chunkOverlap: Overlap,
      notice: Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  ),
  subNode: 'ai_textSplitter',
  async supply(ctx, itemIndex): Promise<TextSplitter> {
    const p = await ctx.params(itemIndex);
    const o = { chunkSize: p.chunkSize, chunkOverlap: overlapOf(p.chunkOverlap) };
    return { kind: 'textSplitter', split: (text) => splitCharacter(text, p.separator, o) };
  },
});

/** n8n's Token Splitter: windows of `chunkSize` cl100k_base tokens (token-windows.ts). */
export const textSplitterTokenNode = defineSubNode({
  type: `${LANGCHAIN}.textSplitterTokenSplitter`,
  versions: [1],
  schema: Type.Object(
    { chunkSize: Size, chunkOverlap: Overlap, notice: Type.Optional(Type.String()) },
    { additionalProperties: false },
  ),
  subNode: 'ai_textSplitter',
  async supply(ctx, itemIndex): Promise<TextSplitter> {
    const p = await ctx.params(itemIndex);
    const o = { chunkSize: p.chunkSize, chunkOverlap: overlapOf(p.chunkOverlap) };
    return { kind: 'textSplitter', split: (text) => splitTokens(text, o, ctx.deps) };
  },
});
