import { type Static, Type } from 'typebox';
import { defineNode } from '../../../engine/node-type.js';
import { LANGCHAIN, locatorValue } from '../ai-parts.js';
import { runStoreModes, storeInputs, supplyStore } from '../vector-store-modes.js';
import { clearStore, memoryVectorStore, storeKeyOf } from './store.js';

const Parameters = Type.Object(
  {
    mode: Type.Enum(['load', 'insert', 'retrieve', 'retrieve-as-tool'] as const, { default: 'retrieve' }),
    memoryKey: Type.Union(
      [
        Type.String({ maxLength: 500 }),
        Type.Object({
          __rl: Type.Optional(Type.Boolean()),
          mode: Type.Optional(Type.String()),
          value: Type.String({ maxLength: 500 }),
          cachedResultName: Type.Optional(Type.String()),
        }),
      ],
      { default: 'vector_store_key' },
    ),
    prompt: Type.String({ default: '', maxLength: 100_000 }),
    topK: Type.Integer({ minimum: 0, maximum: 1_000, default: 4 }),
    includeDocumentMetadata: Type.Boolean({ default: true }),
    clearStore: Type.Boolean({ default: false }),
    toolName: Type.String({ default: '', maxLength: 64 }),
    toolDescription: Type.String({ default: '', maxLength: 10_000 }),
    useReranker: Type.Optional(Type.Boolean()),
    embeddingBatchSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_000 })),
    options: Type.Optional(Type.Object({}, { additionalProperties: true })),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/**
 * n8n's Simple Vector Store (vectorStoreInMemory). As a node: `insert` embeds the documents its loader
 * makes of each input item, `load` answers the documents nearest a prompt. As a sub-node: `retrieve` is a
 * vector store for a retriever or a vector store tool, `retrieve-as-tool` a tool of an agent.
 */
export const vectorStoreInMemoryNode = defineNode({
  type: `${LANGCHAIN}.vectorStoreInMemory`,
  versions: [1, 1.1, 1.2, 1.3],
  schema: Parameters,
  inputs: storeInputs,
  subNode: 'ai_vectorStore',
  alsoSupplies: ['ai_tool'],
  aiInputs: ['ai_embedding', 'ai_document'],
  execute(ctx) {
    // `clearStore` empties a store once per run, before the run's first insert into it.
    const cleared = new Set<string>();
    return runStoreModes(ctx, (p, embeddings) => {
      const key = keyOf(ctx.deps.tenant, p);
      if (p.mode === 'insert' && p.clearStore && !cleared.has(key)) {
        clearStore(key);
        cleared.add(key);
      }
      return memoryVectorStore(key, embeddings);
    });
  },
  supply(ctx, itemIndex) {
    return supplyStore(ctx, itemIndex, (p, embeddings) =>
      memoryVectorStore(keyOf(ctx.deps.tenant, p), embeddings),
    );
  },
});

const keyOf = (tenant: string | undefined, p: Static<typeof Parameters>) =>
  storeKeyOf(tenant, locatorValue(p.memoryKey) || 'vector_store_key');
