import { randomUUID } from 'node:crypto';
import { redactSecrets } from '../../../../../core/redact.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { EngineDeps, Json } from '../../../engine/types.js';
import type { AiDocument, Embeddings, VectorStore } from '../ai-parts.js';

/**
 * A Pinecone index as LangChain's PineconeStore (n8n's) keeps it: the index's host read from the control
 * plane (`GET /indexes/{name}`), then its data plane — `POST /vectors/upsert` in batches of 100 records
 * (id, values, metadata), `POST /query` — in a namespace. The text is the metadata's `text`; other
 * metadata is flattened (`loc.lines.from`), lists of strings kept, nulls and empty objects dropped, as
 * Pinecone stores only flat values. Through the guarded outbound HTTP, bounded in time and size.
 */

export interface PineconeOptions {
  /** Pinecone's control plane (`https://api.pinecone.io`). */
  controlPlane: string;
  apiKey: string;
  index: string;
  /** '' is Pinecone's default namespace. */
  namespace: string;
  /** A Pinecone metadata filter (n8n's metadata filter fields, `{name: value}`). */
  filter: Record<string, Json> | null;
}

/** LangChain's PineconeStore `textKey`. */
const TEXT_KEY = 'text';
/** Records per upsert (LangChain's chunk; Pinecone allows 1,000 and 2 MB). */
const UPSERT_BATCH = 100;
const TIMEOUT_MS = 60_000;
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** The REST API version the requests are written for. */
const API_VERSION = '2025-04';

type Http = EngineDeps['http'];

/** Pinecone's error text: the control plane's `{error: {message}}`, the data plane's `{message}`. */
function pineconeError(raw: string, key: string): string {
  return redactSecrets(pineconeText(raw), [key]);
}

function pineconeText(raw: string): string {
  try {
    const body = JSON.parse(raw) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof body.error === 'string') return body.error;
    if (typeof body.error?.message === 'string') return body.error.message;
    if (typeof body.message === 'string') return body.message;
  } catch {
    // not JSON: the text itself
  }
  return raw.slice(0, 200) || 'no error message';
}

/** LangChain's metadata for Pinecone: nested objects flattened with dots, string lists kept, nulls dropped. */
export function pineconeMetadata(metadata: Record<string, Json>, text: string): Record<string, Json> {
  const out: Record<string, Json> = {};
  const walk = (value: Json, key: string) => {
    if (value === null || value === undefined) return;
    if (Array.isArray(value) && key !== '' && value.every((v) => typeof v === 'string')) {
      out[key] = value;
      return;
    }
    if (typeof value === 'object') {
      const entries = Array.isArray(value)
        ? value.map((v, i) => [String(i), v] as const)
        : Object.entries(value);
      for (const [k, v] of entries) walk(v as Json, key === '' ? k : `${key}.${k}`);
      return;
    }
    out[key] = value;
  };
  walk(metadata, '');
  out[TEXT_KEY] = text;
  return out;
}

export interface PineconeStore extends VectorStore {
  /** n8n's `clearNamespace`: every record of the namespace deleted (a namespace not there yet is fine). */
  clearNamespace(): Promise<void>;
}

export function pineconeStore(http: Http, o: PineconeOptions, embeddings: Embeddings): PineconeStore {
  if (o.index.trim() === '') throw new NodeOperationError('The Pinecone index name is empty');
  const headers = {
    'api-key': o.apiKey,
    'x-pinecone-api-version': API_VERSION,
    'content-type': 'application/json',
    accept: 'application/json',
  };
  const send = (method: string, url: string, body?: unknown) =>
    http({
      method,
      url,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      timeoutMs: TIMEOUT_MS,
      credentialHeaders: ['api-key'],
      maxResponseBytes: MAX_RESPONSE_BYTES,
    });
  const json = (raw: string, doing: string): unknown => {
    try {
      return JSON.parse(raw);
    } catch {
      throw new NodeOperationError(`Pinecone answered ${doing} with a body that is not JSON`);
    }
  };

  /** The index's data-plane origin, asked once per store. */
  let host: Promise<string> | null = null;
  const dataPlane = () => {
    host ??= (async () => {
      const res = await send('GET', `${o.controlPlane}/indexes/${encodeURIComponent(o.index)}`);
      if (res.status === 404)
        throw new NodeOperationError(`Index ${o.index} not found`, {
          description: 'Please check that the index exists in your vector store',
        });
      if (res.status < 200 || res.status >= 300)
        throw new NodeOperationError(
          `Pinecone refused describing the index (${res.status}): ${pineconeError(res.body, o.apiKey)}`,
        );
      const found = (json(res.body, 'describing the index') as { host?: unknown }).host;
      if (typeof found !== 'string' || found === '' || found.length > 500)
        throw new NodeOperationError(`Pinecone did not name the host of index ${o.index}`);
      // The control plane answers a bare host name; Pinecone's clients reach it over https.
      return (/^https?:\/\//.test(found) ? found : `https://${found}`).replace(/\/+$/, '');
    })();
    host.catch(() => {
      host = null;
    });
    return host;
  };
  const dataCall = async (path: string, body: unknown, doing: string): Promise<unknown> => {
    const res = await send('POST', `${await dataPlane()}${path}`, body);
    if (res.status < 200 || res.status >= 300)
      throw new NodeOperationError(
        `Pinecone refused ${doing} (${res.status}): ${pineconeError(res.body, o.apiKey)}`,
      );
    return json(res.body, doing);
  };
  const namespace = o.namespace ? { namespace: o.namespace } : {};

  return {
    kind: 'vectorStore',
    async add(documents: AiDocument[], ids?: string[]) {
      if (documents.length === 0) return;
      const vectors = await embeddings.embedDocuments(documents.map((d) => d.pageContent));
      for (let start = 0; start < documents.length; start += UPSERT_BATCH) {
        const records = documents.slice(start, start + UPSERT_BATCH).map((d, j) => ({
          id: ids?.[start + j] ?? randomUUID(),
          values: vectors[start + j] ?? [],
          metadata: pineconeMetadata(d.metadata, d.pageContent),
        }));
        await dataCall('/vectors/upsert', { vectors: records, ...namespace }, 'the upsert');
      }
    },
    async search(text, topK) {
      if (topK <= 0) return [];
      const vector = await embeddings.embedQuery(text);
      const body = await dataCall(
        '/query',
        {
          vector,
          topK,
          includeMetadata: true,
          includeValues: false,
          ...namespace,
          ...(o.filter ? { filter: o.filter } : {}),
        },
        'the query',
      );
      const matches = (body as { matches?: unknown } | null)?.matches;
      if (!Array.isArray(matches))
        throw new NodeOperationError('Pinecone answered the query without matches');
      return matches.slice(0, topK).map((match) => {
        const m = match as { score?: unknown; metadata?: unknown };
        const { [TEXT_KEY]: content, ...metadata } = (
          m.metadata && typeof m.metadata === 'object' ? m.metadata : {}
        ) as Record<string, Json>;
        return {
          document: { pageContent: typeof content === 'string' ? content : '', metadata },
          score: Number(m.score ?? 0),
        };
      });
    },
    async clearNamespace() {
      if (!o.namespace) return;
      const res = await send('POST', `${await dataPlane()}/vectors/delete`, {
        deleteAll: true,
        namespace: o.namespace,
      });
      // n8n goes on when the namespace does not exist yet (Pinecone answers 404 for it).
      if (res.status !== 404 && (res.status < 200 || res.status >= 300))
        throw new NodeOperationError(
          `Pinecone refused clearing namespace ${o.namespace} (${res.status}): ${pineconeError(res.body, o.apiKey)}`,
        );
    },
  };
}
