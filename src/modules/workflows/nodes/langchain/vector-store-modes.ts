import { type NodeExecutionContext, NodeOperationError, type NodeResult } from '../../engine/node-type.js';
import type { Item, Json } from '../../engine/types.js';
import { type AiTool, type Embeddings, requiredPart, type VectorStore } from './ai-parts.js';
import { jsonDocuments } from './documents.js';
import { toolNameOf } from './from-ai.js';

/**
 * n8n's vector store nodes' modes over any store (the Simple Vector Store, PGVector): one adapter, so a
 * store node says only how it opens its store. `load`/`insert` run as a node; `retrieve` supplies the
 * store to a retriever or a Vector Store tool, `retrieve-as-tool` a tool of an agent. `update` (the stores
 * n8n offers it for: Pinecone) replaces the record of an id with the item's one document.
 */

/** The parameters every n8n vector store node shares. */
export interface StoreModeParams {
  mode: 'load' | 'insert' | 'retrieve' | 'retrieve-as-tool' | 'update';
  /** The record `update` replaces (only stores with that mode have it). */
  id?: string;
  prompt: string;
  topK: number;
  includeDocumentMetadata: boolean;
  toolName: string;
  toolDescription: string;
}

const withMain = new Set(['load', 'insert', 'update']);
/** The node's main inputs by mode: one in `load`/`insert`/`update`, none as a sub-node. */
export const storeInputs = (params: Record<string, unknown>) =>
  withMain.has(String(params.mode ?? 'retrieve')) ? 1 : 0;

/** Opens the node's store for item `itemIndex`, its embeddings supplied for the same item. */
type OpenStore<P> = (p: P, embeddings: Embeddings, itemIndex: number) => Promise<VectorStore> | VectorStore;

/** How a store gets its embeddings: from its `ai_embedding` sub-node, or its own (the knowledge base). */
export interface StoreModeOptions {
  ownEmbeddings?: boolean;
}

/** The embeddings of a store that embeds by itself: never asked. */
const OWN_EMBEDDINGS: Embeddings = {
  kind: 'embeddings',
  embedDocuments: () => Promise.reject(new NodeOperationError('This vector store embeds by itself')),
  embedQuery: () => Promise.reject(new NodeOperationError('This vector store embeds by itself')),
};

const embeddingsFor = <P>(
  ctx: NodeExecutionContext<P>,
  itemIndex: number,
  options: StoreModeOptions,
): Promise<Embeddings> =>
  options.ownEmbeddings
    ? Promise.resolve(OWN_EMBEDDINGS)
    : requiredPart(ctx.subNodes('ai_embedding'), itemIndex, 'embeddings', 'Embeddings');

/** `insert` (the loader's documents, output as n8n does) and `load` (the nearest to the prompt), per item. */
export async function runStoreModes<P extends StoreModeParams>(
  ctx: NodeExecutionContext<P>,
  open: OpenStore<P>,
  options: StoreModeOptions = {},
): Promise<NodeResult> {
  const out: Item[] = [];
  for (let i = 0; i < ctx.items.length; i++) {
    const p = await ctx.params(i);
    if (!withMain.has(p.mode))
      throw new NodeOperationError(`In '${p.mode}' mode the vector store runs only attached to an AI node`);
    const embeddings = await embeddingsFor(ctx, i, options);
    const store = await open(p, embeddings, i);
    if (p.mode === 'update') {
      out.push(await updateOne(store, p.id ?? '', ctx.items[i]?.json, i));
    } else if (p.mode === 'insert') {
      const source = await requiredPart(ctx.subNodes('ai_document'), i, 'documents', 'Document');
      await store.add(source.documents);
      for (const d of source.documents)
        out.push({ json: { metadata: d.metadata, pageContent: d.pageContent }, pairedItem: { item: i } });
    } else {
      for (const { document, score } of await store.search(p.prompt, p.topK)) {
        const doc: Record<string, Json> = p.includeDocumentMetadata
          ? { pageContent: document.pageContent, metadata: document.metadata }
          : { pageContent: document.pageContent };
        out.push({ json: { document: doc, score }, pairedItem: { item: i } });
      }
    }
  }
  return { kind: 'output', output: [out] };
}

/**
 * n8n's `update`: the item's JSON read as its JSON loader reads it (one document per string value), which
 * must give exactly one document, stored under `id` in place of the record there.
 */
async function updateOne(store: VectorStore, id: string, json: unknown, itemIndex: number): Promise<Item> {
  if (id.trim() === '') throw new NodeOperationError("The 'ID' of the document to update is empty");
  const documents = jsonDocuments(json ?? {});
  const [document] = documents;
  if (documents.length !== 1 || !document)
    throw new NodeOperationError('Single document per item expected', {
      description: `The item gives ${documents.length} documents (one per text value of its JSON); update replaces one record with one document`,
    });
  await store.add([document], [id]);
  return {
    json: { metadata: document.metadata, pageContent: document.pageContent },
    pairedItem: { item: itemIndex },
  };
}

/** What a store node supplies as a sub-node: the store (`retrieve`) or a tool over it (`retrieve-as-tool`). */
export async function supplyStore<P extends StoreModeParams>(
  ctx: NodeExecutionContext<P>,
  itemIndex: number,
  open: OpenStore<P>,
  options: StoreModeOptions = {},
): Promise<VectorStore | AiTool> {
  const p = await ctx.params(itemIndex);
  if (p.mode !== 'retrieve' && p.mode !== 'retrieve-as-tool')
    throw new NodeOperationError(`A vector store in '${p.mode}' mode cannot be attached to another node`);
  const embeddings = await embeddingsFor(ctx, itemIndex, options);
  const store = await open(p, embeddings, itemIndex);
  if (p.mode === 'retrieve') return store;
  return vectorStoreTool(
    toolNameOf(p.toolName || ctx.node.name),
    p.toolDescription,
    store,
    p.topK,
    p.includeDocumentMetadata,
  );
}

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
