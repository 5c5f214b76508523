import { type Static, Type } from 'typebox';
import { defineNode, type NodeExecutionContext } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import { postgresPool, runQuery, withConnection } from '../../n8n/postgres/client.js';
import { boundsOf } from '../../n8n/sql/bounds.js';
import { nodeCredential } from '../../n8n/sql/credential.js';
import { LANGCHAIN, locatorValue } from '../ai-parts.js';
import { runStoreModes, storeInputs, supplyStore } from '../vector-store-modes.js';
import { MetadataValues, nameLocator, STORE_MODE_PARAMETERS } from '../vector-store-params.js';
import { type Connect, type PgVectorOptions, pgVectorStore } from './store.js';

const Options = Type.Object(
  {
    distanceStrategy: Type.Optional(Type.Enum(['cosine', 'innerProduct', 'euclidean'] as const)),
    collection: Type.Optional(
      Type.Object({
        values: Type.Optional(
          Type.Object({
            useCollection: Type.Optional(Type.Boolean()),
            collectionName: Type.Optional(Type.String({ maxLength: 500 })),
            collectionTableName: Type.Optional(Type.String({ maxLength: 63 })),
          }),
        ),
      }),
    ),
    columnNames: Type.Optional(
      Type.Object({
        values: Type.Optional(
          Type.Object({
            idColumnName: Type.Optional(Type.String({ maxLength: 63 })),
            vectorColumnName: Type.Optional(Type.String({ maxLength: 63 })),
            contentColumnName: Type.Optional(Type.String({ maxLength: 63 })),
            metadataColumnName: Type.Optional(Type.String({ maxLength: 63 })),
          }),
        ),
      }),
    ),
    metadata: Type.Optional(MetadataValues),
  },
  { additionalProperties: false, default: {} },
);

const Parameters = Type.Object(
  {
    mode: Type.Enum(['load', 'insert', 'retrieve', 'retrieve-as-tool'] as const, { default: 'retrieve' }),
    tableName: nameLocator(63, 'n8n_vectors'),
    createExtension: Type.Optional(Type.Boolean()),
    ...STORE_MODE_PARAMETERS,
    options: Options,
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
type Params = Static<typeof Parameters>;

/** n8n's options as the store's: its defaults are LangChain's (n8n_vectors, id/embedding/text/metadata, cosine). */
function optionsOf(p: Params): PgVectorOptions {
  const columns = p.options.columnNames?.values ?? {};
  const collection = p.options.collection?.values;
  const filter = p.options.metadata?.metadataValues ?? [];
  return {
    table: locatorValue(p.tableName) || 'n8n_vectors',
    columns: {
      id: columns.idColumnName || 'id',
      vector: columns.vectorColumnName || 'embedding',
      content: columns.contentColumnName || 'text',
      metadata: columns.metadataColumnName || 'metadata',
    },
    distance: p.options.distanceStrategy ?? 'cosine',
    collection: collection?.useCollection
      ? {
          name: collection.collectionName || 'n8n',
          table: collection.collectionTableName || 'n8n_vector_collections',
        }
      : null,
    filter:
      filter.length > 0 ? Object.fromEntries(filter.map((f) => [f.name, (f.value ?? null) as Json])) : null,
  };
}

/** Connections of the node's `postgres` credential, reached through the outbound-address guard. */
async function connectOf(ctx: NodeExecutionContext<unknown>): Promise<Connect> {
  const credential = await nodeCredential(ctx, 'postgres');
  const pool = await postgresPool(credential, ctx.deps.connectAddress);
  const bounds = boundsOf({}, ctx.deadlineAt);
  return (work) =>
    withConnection(pool, (client) =>
      work((sql, values) => runQuery(client, sql, values, bounds, { rows: 0 })),
    );
}

/**
 * n8n's Postgres PGVector Store (vectorStorePGVector) on the workflow's own PostgreSQL with pgvector,
 * behind the same vector store part as the Simple Vector Store: `insert` embeds its loader's documents,
 * `load` answers the nearest to a prompt; as a sub-node, `retrieve` is a store for a retriever or a
 * Vector Store tool and `retrieve-as-tool` a tool of an agent.
 */
export const vectorStorePgVectorNode = defineNode({
  type: `${LANGCHAIN}.vectorStorePGVector`,
  versions: [1, 1.1, 1.2, 1.3],
  schema: Parameters,
  inputs: storeInputs,
  subNode: 'ai_vectorStore',
  alsoSupplies: ['ai_tool'],
  aiInputs: ['ai_embedding', 'ai_document'],
  async execute(ctx) {
    // One pool for the run's items (the credential is the node's, not an item's), checked first.
    const connect = await connectOf(ctx as NodeExecutionContext<unknown>);
    return runStoreModes(ctx, (p, embeddings) => pgVectorStore(connect, optionsOf(p), embeddings));
  },
  supply(ctx, itemIndex) {
    return supplyStore(ctx, itemIndex, async (p, embeddings) =>
      pgVectorStore(await connectOf(ctx as NodeExecutionContext<unknown>), optionsOf(p), embeddings),
    );
  },
});
