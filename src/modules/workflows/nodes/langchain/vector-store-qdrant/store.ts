import { randomUUID } from 'node:crypto';
import { redactSecrets } from '../../../../../core/redact.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { EngineDeps, Json } from '../../../engine/types.js';
import type { AiDocument, Embeddings, VectorStore } from '../ai-parts.js';

/**
 * A Qdrant collection over Qdrant's REST API, as LangChain's QdrantVectorStore (n8n's) keeps it: a point
 * per document, a UUID id, the vector, and the payload `{[contentKey]: pageContent, [metadataKey]:
 * metadata}` (`content`/`metadata` by default). Every call goes through the engine's guarded outbound HTTP,
 * bounded in time and size; points go up in batches.
 */

export interface QdrantOptions {
  /** The credential's `qdrantUrl`, without a trailing slash. */
  base: string;
  apiKey: string;
  collection: string;
  contentKey: string;
  metadataKey: string;
  /** n8n's `collectionConfig` (Qdrant's CreateCollection body), used when insert creates the collection. */
  collectionConfig: Record<string, Json> | null;
  /** A Qdrant filter (`must`/`should`/`must_not`), applied to every search. */
  filter: Record<string, Json> | null;
}

/** Points per upsert request: a batch of 3,072-dimension vectors stays well under Qdrant's 32 MB body limit. */
const UPSERT_BATCH = 100;
const TIMEOUT_MS = 60_000;
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

type Http = EngineDeps['http'];

interface Answer {
  status: number;
  body: unknown;
}

/** Qdrant's error text (`{status: {error}}`), else the body's start. */
function qdrantError(body: unknown, raw: string): string {
  const status = (body as { status?: unknown } | null)?.status;
  if (status && typeof status === 'object' && typeof (status as { error?: unknown }).error === 'string')
    return (status as { error: string }).error;
  if (typeof status === 'string') return status;
  return raw.slice(0, 200) || 'no error message';
}

export function qdrantStore(http: Http, o: QdrantOptions, embeddings: Embeddings): VectorStore {
  if (o.collection.trim() === '') throw new NodeOperationError('The Qdrant collection name is empty');
  if (o.collection.length > 255)
    throw new NodeOperationError('The Qdrant collection name is longer than 255 characters');
  const collectionPath = `/collections/${encodeURIComponent(o.collection)}`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (o.apiKey) headers['api-key'] = o.apiKey;

  const call = async (method: string, path: string, body: unknown, doing: string): Promise<Answer> => {
    const res = await http({
      method,
      url: `${o.base}${path}`,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      timeoutMs: TIMEOUT_MS,
      credentialHeaders: ['api-key'],
      maxResponseBytes: MAX_RESPONSE_BYTES,
    });
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.body);
    } catch {
      if (res.status >= 200 && res.status < 300)
        throw new NodeOperationError(`Qdrant answered ${doing} with a body that is not JSON`);
      parsed = null;
    }
    if (res.status === 404 || (res.status >= 200 && res.status < 300))
      return { status: res.status, body: parsed };
    throw new NodeOperationError(
      `Qdrant refused ${doing} (${res.status}): ${redactSecrets(qdrantError(parsed, res.body), [o.apiKey])}`,
    );
  };

  const missing = () =>
    new NodeOperationError(`The Qdrant collection '${o.collection}' does not exist`, {
      description:
        "Insert documents first (insert creates the collection), or check the collection name and the credential's Qdrant URL",
    });

  /** The collection, created (LangChain's default: the vectors' size, cosine) when insert finds none. */
  let ready: Promise<void> | null = null;
  const ensureCollection = (size: number) => {
    ready ??= (async () => {
      const found = await call('GET', collectionPath, undefined, 'reading the collection');
      if (found.status !== 404) return;
      const config = o.collectionConfig ?? { vectors: { size, distance: 'Cosine' } };
      const made = await call('PUT', collectionPath, config, 'creating the collection');
      if (made.status === 404) throw missing();
    })();
    ready.catch(() => {
      ready = null;
    });
    return ready;
  };

  return {
    kind: 'vectorStore',
    async add(documents: AiDocument[], ids?: string[]) {
      if (documents.length === 0) return;
      const vectors = await embeddings.embedDocuments(documents.map((d) => d.pageContent));
      await ensureCollection(vectors[0]?.length ?? 0);
      for (let start = 0; start < documents.length; start += UPSERT_BATCH) {
        const points = documents.slice(start, start + UPSERT_BATCH).map((d, j) => ({
          id: ids?.[start + j] ?? randomUUID(),
          vector: vectors[start + j] ?? [],
          payload: { [o.contentKey]: d.pageContent, [o.metadataKey]: d.metadata },
        }));
        const res = await call('PUT', `${collectionPath}/points?wait=true`, { points }, 'the points');
        if (res.status === 404) throw missing();
      }
    },
    async search(text, topK) {
      if (topK <= 0) return [];
      const vector = await embeddings.embedQuery(text);
      const res = await call(
        'POST',
        `${collectionPath}/points/search`,
        {
          vector,
          limit: topK,
          ...(o.filter ? { filter: o.filter } : {}),
          with_payload: [o.metadataKey, o.contentKey],
          with_vector: false,
        },
        'the search',
      );
      if (res.status === 404) throw missing();
      const result = (res.body as { result?: unknown } | null)?.result;
      if (!Array.isArray(result))
        throw new NodeOperationError('Qdrant answered the search without a result list');
      return result.slice(0, topK).map((point) => {
        const payload = ((point as { payload?: unknown }).payload ?? {}) as Record<string, unknown>;
        const content = payload[o.contentKey];
        const metadata = payload[o.metadataKey];
        return {
          document: {
            pageContent:
              typeof content === 'string' ? content : content == null ? '' : JSON.stringify(content),
            metadata: (metadata && typeof metadata === 'object' && !Array.isArray(metadata)
              ? metadata
              : {}) as Record<string, Json>,
          },
          score: Number((point as { score?: unknown }).score ?? 0),
        };
      });
    },
  };
}
