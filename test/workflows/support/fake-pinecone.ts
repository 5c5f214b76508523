import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OutboundHttp } from '../../../src/core/http/outbound.js';

/**
 * A local Pinecone: the control plane's `GET /indexes/{name}` (answering the index's host, a bare name
 * under `svc.test.pinecone.io` as Pinecone's own) and each index's data plane — `POST /vectors/upsert`,
 * `POST /query` (exact cosine, `{field: value}` / `$eq` / `$in` metadata filters), `POST /vectors/delete`
 * (`deleteAll`) — per namespace, in memory. Errors in Pinecone's bodies (`{error: {code, message}}` on the
 * control plane, `{code, message}` on the data plane); the `Api-Key` header is checked. `route` reroutes
 * the public hosts (`https://api.pinecone.io`, the index hosts) to it, recording the URL asked for.
 */

interface IndexData {
  dimension: number;
  namespaces: Map<string, Map<string, { values: number[]; metadata: Record<string, unknown> }>>;
}

export const PINECONE_HOST_SUFFIX = '-x1y2z3.svc.test.pinecone.io';

export class FakePinecone {
  readonly requests: Array<{ method: string; url: string; headers: Record<string, unknown>; body: unknown }> =
    [];
  /** The URLs the node asked for, before rerouting. */
  readonly asked: string[] = [];
  readonly indexes = new Map<string, IndexData>();
  apiKey = 'pc-key';
  failWith: { status: number; body: string } | null = null;
  hang = false;
  private readonly held: ServerResponse[] = [];
  private server: Server | null = null;
  base = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(req, res, Buffer.concat(chunks).toString('utf8')));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  reset(): void {
    this.requests.length = 0;
    this.asked.length = 0;
    this.indexes.clear();
    this.apiKey = 'pc-key';
    this.failWith = null;
    this.hang = false;
    for (const res of this.held.splice(0)) res.destroy();
  }

  async stop(): Promise<void> {
    for (const res of this.held.splice(0)) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  createIndex(name: string, dimension: number): void {
    this.indexes.set(name, { dimension, namespaces: new Map() });
  }

  /** The records of an index's namespace. */
  records(index: string, namespace = '') {
    return [...(this.indexes.get(index)?.namespaces.get(namespace)?.entries() ?? [])].map(([id, r]) => ({
      id,
      ...r,
    }));
  }

  /** The outbound function's wrapper: Pinecone's public hosts go to this server. */
  route(http: OutboundHttp): OutboundHttp {
    return (req) => {
      const url = new URL(req.url);
      if (url.hostname === 'api.pinecone.io' || url.hostname.endsWith(PINECONE_HOST_SUFFIX)) {
        this.asked.push(req.url);
        const index = url.hostname.endsWith(PINECONE_HOST_SUFFIX)
          ? `/data/${url.hostname.slice(0, -PINECONE_HOST_SUFFIX.length)}`
          : '';
        return http({ ...req, url: `${this.base}${index}${url.pathname}${url.search}` });
      }
      return http(req);
    };
  }

  private handle(req: IncomingMessage, res: ServerResponse, raw: string) {
    let body: Record<string, unknown> = {};
    try {
      body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    } catch {
      // recorded as empty
    }
    const url = req.url ?? '';
    this.requests.push({ method: req.method ?? '', url, headers: { ...req.headers }, body });
    if (this.hang) {
      this.held.push(res);
      return;
    }
    const send = (status: number, payload: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    const control = (status: number, code: string, message: string) =>
      send(status, { error: { code, message }, status });
    const data = (status: number, code: number, message: string) =>
      send(status, { code, message, details: [] });
    if (this.failWith) {
      res.writeHead(this.failWith.status, { 'content-type': 'application/json' }).end(this.failWith.body);
      return;
    }
    if (req.headers['api-key'] !== this.apiKey) return control(401, 'UNAUTHENTICATED', 'Invalid API Key');
    const described = /^\/indexes\/([^/]+)$/.exec(url);
    if (described && req.method === 'GET') {
      const name = decodeURIComponent(described[1] ?? '');
      const index = this.indexes.get(name);
      if (!index) return control(404, 'NOT_FOUND', `Resource ${name} not found`);
      return send(200, {
        name,
        dimension: index.dimension,
        metric: 'cosine',
        host: `${name}${PINECONE_HOST_SUFFIX}`,
        spec: { serverless: { cloud: 'aws', region: 'us-east-1' } },
        status: { ready: true, state: 'Ready' },
        deletion_protection: 'disabled',
      });
    }
    const dataPath = /^\/data\/([^/]+)(\/.*)$/.exec(url);
    const index = dataPath ? this.indexes.get(dataPath[1] ?? '') : undefined;
    if (!dataPath || !index || req.method !== 'POST') return data(404, 5, `Not found: ${url}`);
    const namespace = typeof body.namespace === 'string' ? body.namespace : '';
    const records = index.namespaces.get(namespace);
    if (dataPath[2] === '/vectors/upsert') {
      const vectors = (body.vectors ?? []) as Array<{
        id: string;
        values: number[];
        metadata?: Record<string, unknown>;
      }>;
      for (const v of vectors)
        if (v.values.length !== index.dimension)
          return data(
            400,
            3,
            `Vector dimension ${v.values.length} does not match the dimension of the index ${index.dimension}`,
          );
      const into = records ?? new Map();
      index.namespaces.set(namespace, into);
      for (const v of vectors) into.set(v.id, { values: v.values, metadata: v.metadata ?? {} });
      return send(200, { upsertedCount: vectors.length });
    }
    if (dataPath[2] === '/query') {
      const vector = body.vector as number[];
      if (vector.length !== index.dimension)
        return data(
          400,
          3,
          `Vector dimension ${vector.length} does not match the dimension of the index ${index.dimension}`,
        );
      const filter = body.filter as Record<string, unknown> | undefined;
      const matches = [...(records?.entries() ?? [])]
        .filter(([, r]) => passes(r.metadata, filter))
        .map(([id, r]) => ({
          id,
          score: cosine(vector, r.values),
          values: [],
          ...(body.includeMetadata ? { metadata: r.metadata } : {}),
        }))
        .sort((a, b) => b.score - a.score)
        .slice(0, Number(body.topK ?? 10));
      return send(200, { results: [], matches, namespace, usage: { readUnits: 5 } });
    }
    if (dataPath[2] === '/vectors/delete') {
      if (!records) return data(404, 5, 'Namespace not found');
      if (body.deleteAll === true) records.clear();
      return send(200, {});
    }
    return data(404, 5, `Not found: ${url}`);
  }
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] ?? 0) * (b[i] ?? 0);
    na += (a[i] ?? 0) ** 2;
    nb += (b[i] ?? 0) ** 2;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Pinecone's metadata filter: `{field: value}` (equality), `{field: {$eq}}`, `{field: {$in: […]}}`. */
function passes(metadata: Record<string, unknown>, filter: Record<string, unknown> | undefined): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([field, want]) => {
    const have = metadata[field];
    if (want && typeof want === 'object' && !Array.isArray(want)) {
      const op = want as { $eq?: unknown; $in?: unknown[] };
      if ('$eq' in op) return have === op.$eq;
      if (Array.isArray(op.$in)) return op.$in.includes(have);
      return false;
    }
    return have === want;
  });
}
