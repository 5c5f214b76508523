import { Type } from 'typebox';
import { defineNode, NodeOperationError } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import {
  type AiTool,
  LANGCHAIN,
  locatorValue,
  requiredPart,
  supplied,
  type VectorStore,
} from '../ai-parts.js';
import { toolNameOf } from '../from-ai.js';
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

const withMain = new Set(['load', 'insert']);

/**
 * n8n's Simple Vector Store (vectorStoreInMemory). As a node: `insert` embeds the documents its loader
 * makes of each input item, `load` answers the documents nearest a prompt. As a sub-node: `retrieve` is a
 * vector store for a retriever or a vector store tool, `retrieve-as-tool` a tool of an agent.
 */
export const vectorStoreInMemoryNode = defineNode({
  type: `${LANGCHAIN}.vectorStoreInMemory`,
  versions: [1, 1.1, 1.2, 1.3],
  schema: Parameters,
  inputs: (params) => (withMain.has(String(params.mode ?? 'retrieve')) ? 1 : 0),
  subNode: 'ai_vectorStore',
  alsoSupplies: ['ai_tool'],
  aiInputs: ['ai_embedding', 'ai_document'],
  async execute(ctx) {
    const out: Item[] = [];
    const cleared = new Set<string>();
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      const key = storeKeyOf(ctx.deps.tenant, locatorValue(p.memoryKey) || 'vector_store_key');
      const embeddings = await requiredPart(ctx.subNodes('ai_embedding'), i, 'embeddings', 'Embeddings');
      const store = memoryVectorStore(key, embeddings);
      if (p.mode === 'insert') {
        if (p.clearStore && !cleared.has(key)) {
          clearStore(key);
          cleared.add(key);
        }
        const source = await requiredPart(ctx.subNodes('ai_document'), i, 'documents', 'Document');
        await store.add(source.documents);
        for (const d of source.documents)
          out.push({ json: { metadata: d.metadata, pageContent: d.pageContent }, pairedItem: { item: i } });
      } else if (p.mode === 'load') {
        for (const { document, score } of await store.search(p.prompt, p.topK)) {
          const doc: Record<string, Json> = p.includeDocumentMetadata
            ? { pageContent: document.pageContent, metadata: document.metadata }
            : { pageContent: document.pageContent };
          out.push({ json: { document: doc, score }, pairedItem: { item: i } });
        }
      } else {
        throw new NodeOperationError(`In '${p.mode}' mode the vector store runs only attached to an AI node`);
      }
    }
    return { kind: 'output', output: [out] };
  },
  async supply(ctx, itemIndex): Promise<VectorStore | AiTool> {
    const p = await ctx.params(itemIndex);
    if (p.mode !== 'retrieve' && p.mode !== 'retrieve-as-tool')
      throw new NodeOperationError(`A vector store in '${p.mode}' mode cannot be attached to another node`);
    const handle = ctx.subNodes('ai_embedding')[0];
    if (!handle) throw new NodeOperationError('An Embeddings sub-node must be connected and enabled');
    const embeddings = await supplied(handle, itemIndex, 'embeddings');
    const store = memoryVectorStore(
      storeKeyOf(ctx.deps.tenant, locatorValue(p.memoryKey) || 'vector_store_key'),
      embeddings,
    );
    if (p.mode === 'retrieve') return store;
    return vectorStoreTool(
      toolNameOf(p.toolName || ctx.node.name),
      p.toolDescription,
      store,
      p.topK,
      p.includeDocumentMetadata,
    );
  },
});

/** A store as a tool (n8n's retrieve-as-tool): the nearest documents to the model's query, as JSON. */
export function vectorStoreTool(
  name: string,
  description: string,
  store: VectorStore,
  topK: number,
  metadata: boolean,
): AiTool {
  return {
    kind: 'tool',
    name,
    description: description || `Searches the vector store '${name}' for documents relevant to a query`,
    parameters: {
      type: 'object',
      properties: { input: { type: 'string', description: 'The search query' } },
      required: ['input'],
    },
    async run(args) {
      if (typeof args.input !== 'string') throw new Error("the argument 'input' must be a string");
      const found = await store.search(args.input, topK);
      return JSON.stringify(
        found.map(({ document }) =>
          metadata
            ? { pageContent: document.pageContent, metadata: document.metadata }
            : { pageContent: document.pageContent },
        ),
      );
    },
  };
}
