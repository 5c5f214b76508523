import { Type } from 'typebox';
import { defineNode, NodeOperationError } from '../../../engine/node-type.js';
import type { Json, PlatformAiAccess } from '../../../engine/types.js';
import type { AiDocument, VectorStore } from '../../langchain/ai-parts.js';
import { runStoreModes, storeInputs, supplyStore } from '../../langchain/vector-store-modes.js';

/** A topic as the knowledge base names them (documents/schemas.ts). */
const TOPIC = /^[A-Za-z0-9._:/@+-]{1,100}$/;
/** Documents one run may insert per item, and characters per document (the knowledge base's own bound applies too). */
const MAX_INSERT_DOCUMENTS = 500;

const Parameters = Type.Object(
  {
    mode: Type.Enum(['load', 'insert', 'retrieve', 'retrieve-as-tool'] as const, { default: 'retrieve' }),
    /** The knowledge base topic of the workflow's account. */
    topic: Type.String({ minLength: 1, maxLength: 100 }),
    prompt: Type.String({ default: '', maxLength: 4_000 }),
    topK: Type.Integer({ minimum: 1, maximum: 200, default: 4 }),
    includeDocumentMetadata: Type.Boolean({ default: true }),
    toolName: Type.String({ default: '', maxLength: 64 }),
    toolDescription: Type.String({ default: '', maxLength: 10_000 }),
    options: Type.Object(
      {
        /** The knowledge service's search: keyword and vector fused (default), or one of them. */
        searchMode: Type.Optional(Type.Enum(['hybrid', 'vector', 'keyword'] as const)),
        minScore: Type.Optional(Type.Number({ minimum: 0 })),
        /** The title given to inserted documents (default: the metadata's `source`, else none). */
        title: Type.Optional(Type.String({ maxLength: 300 })),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

type Params = {
  topic: string;
  options: { searchMode?: 'hybrid' | 'vector' | 'keyword'; minScore?: number; title?: string };
};

/** The account's topic as n8n's vector store: insert through the knowledge service, search by its hybrid search. */
function knowledgeStore(ai: PlatformAiAccess | undefined, p: Params): VectorStore {
  if (!ai) throw new NodeOperationError('The knowledge base is not available to workflows here');
  const topic = p.topic.trim();
  if (!TOPIC.test(topic))
    throw new NodeOperationError(`'${topic.slice(0, 100)}' is not a topic name`, {
      description: 'Letters, digits and . _ : / @ + - only, at most 100 characters',
    });
  return {
    kind: 'vectorStore',
    async add(documents: AiDocument[]) {
      if (documents.length > MAX_INSERT_DOCUMENTS)
        throw new NodeOperationError(`At most ${MAX_INSERT_DOCUMENTS} documents are inserted per item`);
      for (const d of documents) {
        if (d.pageContent.trim() === '') continue;
        const source = typeof d.metadata.source === 'string' ? d.metadata.source : undefined;
        const title = p.options.title || source;
        await ai.addKnowledge({
          topic,
          text: d.pageContent,
          metadata: d.metadata,
          ...(title ? { title: title.slice(0, 300) } : {}),
        });
      }
    },
    async search(query, topK) {
      if (query.trim() === '') throw new NodeOperationError('The search query is empty');
      const hits = await ai.searchKnowledge({
        topic,
        query,
        topK,
        mode: p.options.searchMode ?? 'hybrid',
        ...(p.options.minScore !== undefined ? { minScore: p.options.minScore } : {}),
      });
      return hits.map((h) => ({
        score: h.score,
        document: {
          pageContent: h.text,
          metadata: {
            ...h.metadata,
            documentId: h.documentId,
            title: h.title,
            topic: h.topic,
            pageNumber: h.pageNumber,
          } as Record<string, Json>,
        },
      }));
    },
  };
}

/**
 * The platform's knowledge base as an n8n vector store (`n8n-nodes-platform.vectorStoreKnowledgeBase`):
 * n8n's vector store modes over one topic of the workflow's account. `insert` adds each document of the
 * attached loader as a knowledge-base document (chunked, embedded and indexed by the knowledge service,
 * waited for); `load`, `retrieve` (for a retriever or a Vector Store tool) and `retrieve-as-tool` search
 * it with the knowledge service's hybrid search. It embeds with the topic's own model: no embeddings
 * sub-node. The account is the execution's, never a parameter.
 */
export const vectorStoreKnowledgeBaseNode = defineNode({
  type: 'n8n-nodes-platform.vectorStoreKnowledgeBase',
  schema: Parameters,
  inputs: storeInputs,
  subNode: 'ai_vectorStore',
  alsoSupplies: ['ai_tool'],
  aiInputs: ['ai_document'],
  execute(ctx) {
    return runStoreModes(ctx, (p) => knowledgeStore(ctx.deps.platformAi, p), { ownEmbeddings: true });
  },
  supply(ctx, itemIndex) {
    return supplyStore(ctx, itemIndex, (p) => knowledgeStore(ctx.deps.platformAi, p), {
      ownEmbeddings: true,
    });
  },
});
