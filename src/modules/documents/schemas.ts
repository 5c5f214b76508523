import { Type } from 'typebox';
import { IdParams, Nullable, Timestamp } from '../../core/http/schemas.js';
import { DOCUMENT_STATUSES, MAX_CHUNK_PAGE, OPERATIONS } from './document-service.js';
import { FUSIONS, MAX_TOP_K, QUERY_MODES } from './knowledge-service.js';
import { DOCUMENT_SOURCES } from './types.js';

const Topic = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._:/@+-]+$' });
const ModelName = Type.String({ minLength: 1, maxLength: 200 });

export const LoadBody = Type.Object(
  {
    source: Type.Enum(DOCUMENT_SOURCES),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 4000 })),
    content: Type.Optional(Type.String({ minLength: 1 })),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    topic: Type.Optional(Topic),
    metadata: Type.Optional(Type.Object({}, { additionalProperties: true, maxProperties: 100 })),
  },
  { additionalProperties: false },
);

const Page = Type.Object({ pageNumber: Type.Integer(), text: Type.String() });

export const DocumentView = Type.Object(
  {
    id: Type.String(),
    documentId: Type.String(),
    source: Type.Enum(DOCUMENT_SOURCES),
    url: Nullable(Type.String()),
    title: Nullable(Type.String()),
    mimeType: Type.String(),
    topic: Type.String(),
    metadata: Type.Object({}, { additionalProperties: true }),
    pages: Type.Optional(Type.Array(Page)),
    charCount: Type.Integer(),
    pageCount: Type.Integer(),
    chunkCount: Type.Integer(),
    contentHash: Type.String(),
    status: Type.Enum(DOCUMENT_STATUSES),
    processing: Type.Boolean({ description: 'A processing job is queued or running' }),
    error: Nullable(Type.String()),
    embeddingModel: Nullable(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { required: ['id', 'documentId', 'source', 'mimeType', 'topic', 'status', 'createdAt'] },
);

export const DocumentParams = IdParams;
export const DocumentGetQuery = Type.Object(
  {
    fields: Type.Optional(
      Type.String({ maxLength: 500, description: 'Comma list; omit `pages` to skip the text' }),
    ),
  },
  { additionalProperties: false },
);

export const ChunkListQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_CHUNK_PAGE,
        description: `Chunks per page (default and most ${MAX_CHUNK_PAGE})`,
      }),
    ),
    cursor: Type.Optional(
      Type.String({ maxLength: 40, description: 'Opaque cursor from a previous nextCursor' }),
    ),
    sort: Type.Optional(Type.Enum(['index'] as const, { description: 'Chunks come in document order only' })),
  },
  { additionalProperties: false },
);

export const ChunkList = Type.Object({
  nextCursor: Nullable(Type.String({ description: 'The next page, or null after the last chunk' })),
  data: Type.Array(
    Type.Object({
      chunkId: Type.String(),
      index: Type.Integer(),
      pageNumber: Type.Integer(),
      startOffset: Type.Integer(),
      endOffset: Type.Integer(),
      text: Type.String(),
      embeddingModel: Nullable(Type.String()),
    }),
  ),
});

export const ProcessBody = Type.Object(
  {
    operations: Type.Optional(
      Type.Array(Type.Enum(OPERATIONS), { minItems: 1, maxItems: 3, uniqueItems: true }),
    ),
    chunkSize: Type.Optional(Type.Integer({ minimum: 50, maximum: 20_000 })),
    chunkOverlap: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
    embeddingModel: Type.Optional(ModelName),
  },
  { additionalProperties: false },
);

export const ProcessQuery = Type.Object(
  {
    wait: Type.Optional(
      Type.Boolean({ description: 'Answer when processing ends (up to DOCUMENT_PROCESS_WAIT_MS)' }),
    ),
  },
  { additionalProperties: false },
);

export const ProcessView = Type.Object({
  jobId: Type.String(),
  documentId: Type.String(),
  status: Type.String(),
  operations: Type.Array(Type.String()),
});

export const TopicList = Type.Array(
  Type.Object({
    topic: Type.String(),
    documentCount: Type.Integer(),
    chunkCount: Type.Integer(),
    embeddingModel: Nullable(Type.String()),
    updatedAt: Type.String(),
  }),
);

export const QueryBody = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 4000 }),
    topK: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TOP_K })),
    topics: Type.Optional(Type.Array(Topic, { minItems: 1, maxItems: 50, uniqueItems: true })),
    mode: Type.Optional(Type.Enum(QUERY_MODES)),
    minScore: Type.Optional(Type.Number()),
    embeddingModel: Type.Optional(ModelName),
    weights: Type.Optional(
      Type.Object(
        {
          keyword: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
          vector: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
        },
        {
          additionalProperties: false,
          description:
            'Hybrid mode: the weight of each side in the fusion (default keyword 1, vector KNOWLEDGE_VECTOR_WEIGHT: 0.1)',
        },
      ),
    ),
    fusion: Type.Optional(
      Type.Enum(FUSIONS, {
        description:
          'Hybrid mode: `score` (normalised scores, weighted; default) or `rank` (weighted reciprocal ranks)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const QueryView = Type.Object({
  results: Type.Array(
    Type.Object({
      chunkId: Type.String(),
      documentId: Type.String(),
      title: Nullable(Type.String()),
      topic: Type.String(),
      pageNumber: Type.Integer(),
      text: Type.String(),
      score: Type.Number(),
      keywordRank: Nullable(Type.Integer()),
      vectorRank: Nullable(Type.Integer()),
    }),
  ),
  tookMs: Type.Number(),
  mode: Type.Enum(QUERY_MODES),
});
