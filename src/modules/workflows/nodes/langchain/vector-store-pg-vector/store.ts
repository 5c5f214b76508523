import { NodeOperationError } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import type { AiDocument, Embeddings, VectorStore } from '../ai-parts.js';

/** Runs one SQL statement on a connection of the node's `postgres` credential (bounded like the Postgres node's). */
export type Query = (sql: string, values: unknown[]) => Promise<Array<Record<string, unknown>>>;
/** Runs `work` on one connection (a transaction's statements must share it). */
export type Connect = <T>(work: (query: Query) => Promise<T>) => Promise<T>;

export interface PgVectorOptions {
  table: string;
  columns: { id: string; vector: string; content: string; metadata: string };
  distance: 'cosine' | 'innerProduct' | 'euclidean';
  /** n8n's collection option: rows tagged with a collection, kept in a second table. */
  collection: { name: string; table: string } | null;
  /** Metadata a retrieved row must hold (`metadata @> filter`). */
  filter: Record<string, Json> | null;
}

/** pgvector's operators for n8n's (LangChain's) distance strategies: smaller is nearer. */
const OPERATORS = { cosine: '<=>', innerProduct: '<#>', euclidean: '<->' } as const;
/** Rows per INSERT statement. */
const INSERT_BATCH = 200;
/** Taken while the extension is created, so concurrent first runs on a fresh database do not race (n8n's key). */
const EXTENSION_LOCK = 979021312;

/** A quoted SQL identifier: any name PostgreSQL keeps (up to 63 bytes), without quotes or NUL. */
export function identifier(name: string, what: string): string {
  if (name === '' || Buffer.byteLength(name) > 63 || /["\0]/.test(name))
    throw new NodeOperationError(
      `The ${what} '${name.slice(0, 80)}' is not a usable SQL name (1–63 bytes, no double quote)`,
    );
  return `"${name}"`;
}

const vectorText = (v: number[]) => {
  if (!v.every(Number.isFinite))
    throw new NodeOperationError('The embeddings model answered a non-finite number');
  return `[${v.join(',')}]`;
};

/** What PostgreSQL said, as the node's error; a missing pgvector says how to get it. */
function sqlError(error: unknown, doing: string): Error {
  if (error instanceof NodeOperationError) return error;
  const message = (error as Error).message ?? String(error);
  if (/different vector dimensions|expected \d+ dimensions/.test(message))
    return new NodeOperationError(
      `The query's embedding does not have the stored vectors' dimensions: use the same embeddings model (${message})`,
    );
  return new NodeOperationError(`PGVector: ${doing} failed: ${message}`);
}

/**
 * n8n's PGVector store (LangChain's PGVectorStore) on a PostgreSQL server with the pgvector extension:
 * its table (`id uuid, text, metadata jsonb, embedding vector`, names as configured) and, with a
 * collection, the collection table (`uuid, name, cmetadata`) and the rows' `collection_id`.
 */
export function pgVectorStore(connect: Connect, o: PgVectorOptions, embeddings: Embeddings): VectorStore {
  const table = identifier(o.table, 'table name');
  const col = {
    id: identifier(o.columns.id, 'ID column name'),
    vector: identifier(o.columns.vector, 'vector column name'),
    content: identifier(o.columns.content, 'content column name'),
    metadata: identifier(o.columns.metadata, 'metadata column name'),
  };
  const collectionTable = o.collection ? identifier(o.collection.table, 'collection table name') : null;
  const ready = new Map<'read' | 'write', Promise<string | null | undefined>>();

  /**
   * The extension and tables, created only when missing: a role that may not create (or a read-only
   * replica) works on a database someone prepared. Answers the collection's uuid, if any — `null`
   * without a collection, `undefined` when a search's collection does not exist yet (nothing to find).
   */
  const prepare = (query: Query, writing: boolean) => {
    const key = writing ? 'write' : 'read';
    let pending = ready.get(key);
    if (!pending) {
      pending = (async () => {
        const found = await existing(query, o.table, collectionTable ? o.collection?.table : undefined);
        if (!found.extension) await ensureExtension(query);
        try {
          if (!found.table)
            await query(
              `CREATE TABLE IF NOT EXISTS ${table} (${col.id} uuid NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY, ${col.content} text, ${col.metadata} jsonb, ${col.vector} vector)`,
              [],
            );
          if (!o.collection || !collectionTable) return null;
          if (!found.collectionTable)
            await query(
              `CREATE TABLE IF NOT EXISTS ${collectionTable} (uuid uuid NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY, name character varying, cmetadata jsonb)`,
              [],
            );
          if (!found.collectionColumn)
            await query(
              `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS collection_id uuid REFERENCES ${collectionTable}(uuid) ON DELETE CASCADE`,
              [],
            );
          const rows = await query(`SELECT uuid FROM ${collectionTable} WHERE name = $1 LIMIT 1`, [
            o.collection.name,
          ]);
          if (rows[0]) return String(rows[0].uuid);
          if (!writing) return undefined;
          const made = await query(
            `INSERT INTO ${collectionTable} (name, cmetadata) VALUES ($1, '{}') RETURNING uuid`,
            [o.collection.name],
          );
          return String(made[0]?.uuid);
        } catch (error) {
          throw sqlError(error, 'preparing the table');
        }
      })();
      ready.set(key, pending);
      // A failure or a collection not made yet is asked again next time.
      pending.then(
        (id) => id === undefined && ready.delete(key),
        () => ready.delete(key),
      );
    }
    return pending;
  };

  return {
    kind: 'vectorStore',
    async add(documents: AiDocument[]) {
      if (documents.length === 0) return;
      const vectors = await embeddings.embedDocuments(documents.map((d) => d.pageContent));
      await connect(async (query) => {
        const collectionId = await prepare(query, true);
        for (let start = 0; start < documents.length; start += INSERT_BATCH) {
          const values: unknown[] = [];
          const rows = documents.slice(start, start + INSERT_BATCH).map((d, j) => {
            const at = values.length;
            // PostgreSQL text holds no NUL; LangChain drops them too.
            values.push(
              d.pageContent.replace(/\0/g, ''),
              JSON.stringify(d.metadata),
              vectorText(vectors[start + j] ?? []),
            );
            if (collectionId) values.push(collectionId);
            return `($${at + 1}, $${at + 2}::jsonb, $${at + 3}::vector${collectionId ? `, $${at + 4}::uuid` : ''})`;
          });
          try {
            await query(
              `INSERT INTO ${table} (${col.content}, ${col.metadata}, ${col.vector}${collectionId ? ', collection_id' : ''}) VALUES ${rows.join(', ')}`,
              values,
            );
          } catch (error) {
            throw sqlError(error, 'inserting the documents');
          }
        }
      });
    },
    async search(text, topK) {
      if (topK <= 0) return [];
      const q = vectorText(await embeddings.embedQuery(text));
      return connect(async (query) => {
        const collectionId = await prepare(query, false);
        if (collectionId === undefined) return [];
        const values: unknown[] = [q];
        const where: string[] = [];
        if (collectionId) {
          values.push(collectionId);
          where.push(`collection_id = $${values.length}::uuid`);
        }
        if (o.filter && Object.keys(o.filter).length > 0) {
          values.push(JSON.stringify(o.filter));
          where.push(`${col.metadata} @> $${values.length}::jsonb`);
        }
        values.push(topK);
        let rows: Array<Record<string, unknown>>;
        try {
          rows = await query(
            `SELECT ${col.content} AS content, ${col.metadata} AS metadata, ${col.vector} ${OPERATORS[o.distance]} $1::vector AS distance FROM ${table}${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY distance ASC LIMIT $${values.length}`,
            values,
          );
        } catch (error) {
          throw sqlError(error, 'searching');
        }
        // LangChain answers pgvector's distance as the score (smaller is nearer), and so does n8n.
        return rows.map((r) => ({
          document: {
            pageContent: String(r.content ?? ''),
            metadata: (r.metadata && typeof r.metadata === 'object' ? r.metadata : {}) as Record<
              string,
              Json
            >,
          },
          score: Number(r.distance),
        }));
      });
    },
  };
}

/** Which of the store's objects exist already (one catalog read, no privilege needed). */
async function existing(
  query: Query,
  table: string,
  collectionTable: string | undefined,
): Promise<{ extension: boolean; table: boolean; collectionTable: boolean; collectionColumn: boolean }> {
  const quoted = (name: string) => `"${name}"`;
  try {
    const [row] = await query(
      `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') AS extension,
              to_regclass($1) IS NOT NULL AS has_table,
              ($2::text IS NOT NULL AND to_regclass($2) IS NOT NULL) AS has_collection_table,
              EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'collection_id' AND NOT attisdropped) AS has_collection_column`,
      [quoted(table), collectionTable === undefined ? null : quoted(collectionTable)],
    );
    return {
      extension: row?.extension === true,
      table: row?.has_table === true,
      collectionTable: row?.has_collection_table === true,
      collectionColumn: row?.has_collection_column === true,
    };
  } catch (error) {
    throw sqlError(error, 'reading the catalog');
  }
}

/** `CREATE EXTENSION IF NOT EXISTS vector` under n8n's advisory lock; a server without pgvector is named. */
async function ensureExtension(query: Query): Promise<void> {
  try {
    await query('BEGIN', []);
    await query('SELECT pg_advisory_xact_lock($1)', [EXTENSION_LOCK]);
    await query('CREATE EXTENSION IF NOT EXISTS vector', []);
    await query('COMMIT', []);
  } catch (error) {
    await query('ROLLBACK', []).catch(() => undefined);
    throw new NodeOperationError('The pgvector extension is not available on this PostgreSQL server', {
      description: `CREATE EXTENSION vector failed: ${(error as Error).message}. The PGVector store needs pgvector (https://github.com/pgvector/pgvector) installed on the server, and the extension created once by a user allowed to.`,
    });
  }
}
