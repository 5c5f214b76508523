import { NodeOperationError } from '../../../engine/node-type.js';
import type { AiDocument, Embeddings, VectorStore } from '../ai-parts.js';

/**
 * n8n's Simple (in-memory) vector stores, in this process as n8n keeps them in its own: by account and
 * memory key, so no account reads another's. Bounded in stores (least recently used go first) and in
 * documents per store; search is exact cosine similarity.
 */
const MAX_STORES = 1_000;
const MAX_DOCUMENTS = 50_000;

interface Entry {
  document: AiDocument;
  vector: number[];
  norm: number;
}

const stores = new Map<string, Entry[]>();

export function storeKeyOf(tenant: string | undefined, memoryKey: string): string {
  return `${tenant ?? ''}\u0000${memoryKey}`;
}

function entriesOf(key: string, create: boolean): Entry[] | undefined {
  const list = stores.get(key);
  if (list) {
    stores.delete(key);
    stores.set(key, list);
    return list;
  }
  if (!create) return undefined;
  const fresh: Entry[] = [];
  stores.set(key, fresh);
  while (stores.size > MAX_STORES) {
    const oldest = stores.keys().next().value;
    if (oldest === undefined) break;
    stores.delete(oldest);
  }
  return fresh;
}

export function clearStore(key: string): void {
  stores.delete(key);
}

const normOf = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

/** The store under `key` as an ai_vectorStore part, its vectors from `embeddings`. */
export function memoryVectorStore(key: string, embeddings: Embeddings): VectorStore {
  return {
    kind: 'vectorStore',
    async add(documents) {
      if (documents.length === 0) return;
      const vectors = await embeddings.embedDocuments(documents.map((d) => d.pageContent));
      const list = entriesOf(key, true) ?? [];
      if (list.length + documents.length > MAX_DOCUMENTS)
        throw new NodeOperationError(`The in-memory vector store holds at most ${MAX_DOCUMENTS} documents`);
      documents.forEach((document, i) => {
        const vector = vectors[i] ?? [];
        list.push({ document, vector, norm: normOf(vector) });
      });
    },
    async search(query, topK) {
      const list = entriesOf(key, false);
      if (!list || list.length === 0) return [];
      const q = await embeddings.embedQuery(query);
      const qn = normOf(q);
      const scored = list.map((e) => {
        if (e.vector.length !== q.length)
          throw new NodeOperationError(
            `The query's embedding has ${q.length} dimensions, the stored documents' ${e.vector.length}: use the same embeddings model`,
          );
        let dot = 0;
        for (let i = 0; i < q.length; i++) dot += (q[i] ?? 0) * (e.vector[i] ?? 0);
        return { document: e.document, score: qn === 0 || e.norm === 0 ? 0 : dot / (qn * e.norm) };
      });
      return scored.sort((a, b) => b.score - a.score).slice(0, Math.max(0, topK));
    },
  };
}
