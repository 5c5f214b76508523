import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import { type AiDocument, type DocumentSource, LANGCHAIN, supplied, type TextSplitter } from '../ai-parts.js';
import { jsonDocuments, splitDocuments, textDocument, withMetadata } from '../documents.js';
import { splitRecursive } from '../text-splitter/split.js';
import { BINARY_LOADERS, type BinaryLoader, loadBinary } from './binary.js';

const Parameters = Type.Object(
  {
    dataType: Type.Enum(['json', 'binary'] as const, { default: 'json' }),
    jsonMode: Type.Enum(['allInputData', 'expressionData'] as const, { default: 'allInputData' }),
    binaryMode: Type.Enum(['allInputData', 'specificField'] as const, { default: 'allInputData' }),
    loader: Type.Optional(Type.String({ maxLength: 50 })),
    jsonData: Type.Optional(Type.Unknown()),
    binaryDataKey: Type.String({ default: 'data', maxLength: 200 }),
    textSplittingMode: Type.Enum(['simple', 'custom'] as const, { default: 'simple' }),
    options: Type.Object(
      {
        metadata: Type.Optional(
          Type.Object({
            metadataValues: Type.Optional(
              Type.Array(Type.Object({ name: Type.String({ maxLength: 200 }), value: Type.Unknown() }), {
                maxItems: 100,
              }),
            ),
          }),
        ),
        pointers: Type.Optional(Type.String({ maxLength: 1_000 })),
        splitPages: Type.Optional(Type.Boolean()),
        separator: Type.Optional(Type.String()),
        column: Type.Optional(Type.String()),
      },
      { additionalProperties: false, default: {} },
    ),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/**
 * n8n's Default Data Loader: the documents of one item of its root (a vector store inserting) — the
 * item's JSON (each string value a document), an expression's text, or its binary files (PDF, CSV, DOCX,
 * JSON, text: binary.ts) — cut by
 * the attached text splitter (v1, v1.1 `custom`) or by the recursive splitter at 1000/200 (v1.1 `simple`).
 */
export const documentDefaultDataLoaderNode = defineSubNode({
  type: `${LANGCHAIN}.documentDefaultDataLoader`,
  versions: [1, 1.1],
  schema: Parameters,
  subNode: 'ai_document',
  aiInputs: ['ai_textSplitter'],
  async supply(ctx, itemIndex): Promise<DocumentSource> {
    const p = await ctx.params(itemIndex);
    const item = ctx.items[itemIndex];
    const simple = (ctx.node.typeVersion ?? 1) >= 1.1 && p.textSplittingMode === 'simple';
    let splitter: TextSplitter | undefined;
    if (simple)
      splitter = {
        kind: 'textSplitter',
        split: (t) => splitRecursive(t, { chunkSize: 1000, chunkOverlap: 200 }),
      };
    else {
      const handle = ctx.subNodes('ai_textSplitter')[0];
      splitter = handle ? await supplied(handle, itemIndex, 'textSplitter') : undefined;
    }
    let documents: AiDocument[];
    if (p.dataType === 'binary') {
      const loader = p.loader ?? 'auto';
      if (!(BINARY_LOADERS as readonly string[]).includes(loader))
        throw new NodeOperationError(`Loader '${loader}' is not one of: ${BINARY_LOADERS.join(', ')}`);
      // Every binary property of the item, or the one named (n8n's `specificField`).
      const keys =
        p.binaryMode === 'specificField' ? [p.binaryDataKey] : Object.keys(item?.binary ?? {}).slice(0, 100);
      if (keys.length === 0) throw new NodeOperationError('No binary data set.');
      documents = [];
      for (const key of keys) {
        const file = item?.binary?.[key];
        if (!file) throw new NodeOperationError(`The item has no binary property '${key}'`);
        documents.push(
          ...(await loadBinary(file, loader as BinaryLoader, {
            ...(p.options.splitPages !== undefined ? { splitPages: p.options.splitPages } : {}),
            ...(p.options.column !== undefined ? { column: p.options.column } : {}),
            ...(p.options.separator !== undefined ? { separator: p.options.separator } : {}),
            ...(p.options.pointers !== undefined ? { pointers: p.options.pointers } : {}),
          })),
        );
      }
    } else if (p.jsonMode === 'expressionData') {
      const data = p.jsonData;
      documents = typeof data === 'string' ? [textDocument(data)] : jsonDocuments(data);
    } else {
      documents = jsonDocuments(item?.json ?? {});
    }
    const metadata = (p.options.metadata?.metadataValues ?? []).map((m) => ({
      name: m.name,
      value: m.value as Json,
    }));
    return {
      kind: 'documents',
      documents: await splitDocuments(withMetadata(documents, metadata), splitter),
    };
  },
});
