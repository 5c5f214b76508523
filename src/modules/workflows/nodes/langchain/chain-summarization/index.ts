import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { type AiDocument, LANGCHAIN, requiredPart, supplied, type TextSplitter } from '../ai-parts.js';
import { binaryText, jsonDocuments, splitDocuments, textDocument } from '../documents.js';
import { splitRecursive } from '../text-splitter/split.js';
import { type Method, type Prompts, summarize } from './summarize.js';

const PromptFields = {
  summarizationMethod: Type.Optional(Type.Enum(['map_reduce', 'stuff', 'refine'] as const)),
  prompt: Type.Optional(Type.String({ maxLength: 100_000 })),
  combineMapPrompt: Type.Optional(Type.String({ maxLength: 100_000 })),
  refineQuestionPrompt: Type.Optional(Type.String({ maxLength: 100_000 })),
  refinePrompt: Type.Optional(Type.String({ maxLength: 100_000 })),
};

const V1Parameters = Type.Object(
  {
    type: Type.Enum(['map_reduce', 'stuff', 'refine'] as const, { default: 'map_reduce' }),
    options: Type.Object(
      {
        combineMapPrompt: PromptFields.combineMapPrompt,
        prompt: PromptFields.prompt,
        refineQuestionPrompt: PromptFields.refineQuestionPrompt,
        refinePrompt: PromptFields.refinePrompt,
      },
      { additionalProperties: false, default: {} },
    ),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** n8n's Summarization Chain v1: all items' documents (from the attached loader) in one summary, `{response}`. */
export const chainSummarizationV1Node = defineNode({
  type: `${LANGCHAIN}.chainSummarization`,
  versions: [1],
  schema: V1Parameters,
  aiInputs: ['ai_languageModel', 'ai_document'],
  async execute(ctx) {
    const p = await ctx.params(0);
    const model = await requiredPart(ctx.subNodes('ai_languageModel'), 0, 'chatModel', 'Chat Model');
    const documents: AiDocument[] = [];
    for (let i = 0; i < ctx.items.length; i++)
      documents.push(
        ...(await requiredPart(ctx.subNodes('ai_document'), i, 'documents', 'Document')).documents,
      );
    const response = await summarize(model, documents, p.type, p.options);
    return output([{ json: { response } }]);
  },
});

const V2Parameters = Type.Object(
  {
    operationMode: Type.Enum(['nodeInputJson', 'nodeInputBinary', 'documentLoader'] as const, {
      default: 'nodeInputJson',
    }),
    chunkingMode: Type.Enum(['simple', 'advanced', 'none'] as const, { default: 'simple' }),
    chunkSize: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1000 }),
    chunkOverlap: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 200 }),
    options: Type.Object(
      {
        binaryDataKey: Type.Optional(Type.String({ maxLength: 200 })),
        summarizationMethodAndPrompts: Type.Optional(
          Type.Object({ values: Type.Optional(Type.Object(PromptFields, { additionalProperties: false })) }),
        ),
        batching: Type.Optional(Type.Object({}, { additionalProperties: true })),
      },
      { additionalProperties: false, default: {} },
    ),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/**
 * n8n's Summarization Chain v2: one summary per item — of its JSON's text values or its binary text
 * file, cut by the recursive splitter (`simple`) or the attached one (`advanced`), or of the attached
 * loader's documents — answered as `{response}` (v2) or `{output}` (v2.1, batched).
 */
export const chainSummarizationV2Node = defineNode({
  type: `${LANGCHAIN}.chainSummarization`,
  versions: [2, 2.1],
  schema: V2Parameters,
  aiInputs: ['ai_languageModel', 'ai_document', 'ai_textSplitter'],
  async execute(ctx) {
    const out: Item[] = [];
    // n8n answers `{response}` (v2, and v2.1 without batching) or `{output}` (v2.1's batched run, its
    // default batch size being 5): templates made on v2 read `$json.response`.
    const batching = (ctx.items.length > 0 ? (await ctx.params(0)).options.batching : undefined) as
      | { batchSize?: unknown }
      | undefined;
    const batchSize = typeof batching?.batchSize === 'number' ? batching.batchSize : 5;
    const key = (ctx.node.typeVersion ?? 2) >= 2.1 && batchSize > 1 ? 'output' : 'response';
    for (let i = 0; i < ctx.items.length; i++) {
      try {
        const p = await ctx.params(i);
        const item = ctx.items[i];
        const model = await requiredPart(ctx.subNodes('ai_languageModel'), i, 'chatModel', 'Chat Model');
        let documents: AiDocument[];
        if (p.operationMode === 'documentLoader') {
          documents = (await requiredPart(ctx.subNodes('ai_document'), i, 'documents', 'Document')).documents;
        } else {
          let splitter: TextSplitter | undefined;
          if (p.chunkingMode === 'simple') {
            const o = { chunkSize: p.chunkSize, chunkOverlap: p.chunkOverlap };
            splitter = { kind: 'textSplitter', split: (t) => splitRecursive(t, o) };
          } else if (p.chunkingMode === 'advanced') {
            const handle = ctx.subNodes('ai_textSplitter')[0];
            splitter = handle ? await supplied(handle, i, 'textSplitter') : undefined;
          }
          const raw =
            p.operationMode === 'nodeInputBinary'
              ? [textDocument(binaryText(item, p.options.binaryDataKey || 'data').text)]
              : jsonDocuments(item?.json ?? {});
          documents = await splitDocuments(raw, splitter);
        }
        const values = p.options.summarizationMethodAndPrompts?.values ?? {};
        const method: Method = values.summarizationMethod ?? 'map_reduce';
        const prompts: Prompts = values;
        out.push({
          json: { [key]: await summarize(model, documents, method, prompts) },
          pairedItem: { item: i },
        });
      } catch (error) {
        if (ctx.node.continueOnFail !== true) throw error;
        out.push({ json: { error: (error as Error).message }, pairedItem: { item: i } });
      }
    }
    return output(out);
  },
});

export const chainSummarizationNodes = [chainSummarizationV1Node, chainSummarizationV2Node];
