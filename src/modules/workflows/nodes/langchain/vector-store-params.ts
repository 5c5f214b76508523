import { Type } from 'typebox';

/**
 * The parameters n8n's vector store nodes share (its `createVectorStoreNode`): what a search asks, how
 * many it takes, and the tool's name and description in retrieve-as-tool mode.
 */
export const STORE_MODE_PARAMETERS = {
  prompt: Type.String({ default: '', maxLength: 100_000 }),
  topK: Type.Integer({ minimum: 0, maximum: 1_000, default: 4 }),
  includeDocumentMetadata: Type.Boolean({ default: true }),
  toolName: Type.String({ default: '', maxLength: 64 }),
  toolDescription: Type.String({ default: '', maxLength: 10_000 }),
  useReranker: Type.Optional(Type.Boolean()),
  embeddingBatchSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_000 })),
};

/** A store's collection, index or table: a name, or n8n's resource locator of it. */
export const nameLocator = (maxLength: number, fallback: unknown = { __rl: true, mode: 'list', value: '' }) =>
  Type.Union(
    [
      Type.String({ maxLength }),
      Type.Object({
        __rl: Type.Optional(Type.Boolean()),
        mode: Type.Optional(Type.String()),
        value: Type.String({ maxLength }),
        cachedResultName: Type.Optional(Type.String()),
        cachedResultUrl: Type.Optional(Type.String()),
      }),
    ],
    { default: fallback },
  );

/** The metadata an insert adds to every document (`options.metadata.metadataValues`). */
export const MetadataValues = Type.Object({
  metadataValues: Type.Optional(
    Type.Array(Type.Object({ name: Type.String({ maxLength: 500 }), value: Type.Unknown() }), {
      maxItems: 100,
    }),
  ),
});
