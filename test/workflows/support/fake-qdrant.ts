import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local Qdrant speaking its REST API: collections (`GET`/`PUT /collections/{c}`), points
 * (`PUT /collections/{c}/points?wait=true`) and search (`POST /collections/{c}/points/search`, exact
 * cosine over the points kept in memory, with Qdrant's `must`/`should`/`must_not` filters on payload
 * paths and `with_payload` keys). Answers in Qdrant's envelope (`{result, status, time}`, errors as
 * `{status: {error}}`); checks the `api-key` header when it has one. Records each request.
 */

export interface QdrantPoint {
  id: string | number;
  vector: number[];
  payload: Record<string, unknown>;
}

interface Collection {
  size: number;
  distance: string;
  config: Record<string, unknown>;
  points: Map<string, QdrantPoint>;
}

type Condition = { key?: string; match?: { value?: unknown; any?: unknown[] } };
type Filter = { must?: Condition[]; should?: Condition[]; must_not?: Condition[] };

export class FakeQdrant {
  readonly requests: Array<{ method: string; url: string; headers: Record<string, unknown>; body: unknown }> =
    [];
  readonly collections = new Map<string, Collection>();
  /** The key every request must carry in `api-key`, when set. */
  apiKey: string | null = null;
  /** The next requests answer this instead (a failing server). */
  failWith: { status: number; body: string } | null = null;
  /** Requests are read but never answered (a hanging server). */
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
    this.collections.clear();
    this.apiKey = null;
    this.failWith = null;
    this.hang = false;
    for (const res of this.held.splice(0)) res.destroy();
  }

  async stop(): Promise<void> {
    for (const res of this.held.splice(0)) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /** The requests to a path (method and path, query left off). */
  calls(method: string, path: string) {
    return this.requests.filter((r) => r.method === method && r.url.split('?')[0] === path);
  }

  private handle(req: IncomingMessage, res: ServerResponse, raw: string) {
    let body: unknown = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = raw;
    }
    const url = req.url ?? '';
    this.requests.push({ method: req.method ?? '', url, headers: { ...req.headers }, body });
    if (this.hang) {
      this.held.push(res);
      return;
    }
    const send = (status: number, payload: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    const ok = (result: unknown) => send(200, { result, status: 'ok', time: 0.001 });
    const error = (status: number, message: string) => send(status, { status: { error: message }, time: 0 });
    if (this.failWith) {
      res.writeHead(this.failWith.status, { 'content-type': 'application/json' }).end(this.failWith.body);
      return;
    }
    if (this.apiKey !== null && req.headers['api-key'] !== this.apiKey) {
      res.writeHead(401).end('Invalid api-key');
      return;
    }
    const [path = ''] = url.split('?');
    const m = /^\/collections\/([^/]+)(\/points(?:\/search)?)?$/.exec(path);
    if (!m) return error(404, `Not found: ${path}`);
    const name = decodeURIComponent(m[1] ?? '');
    const collection = this.collections.get(name);
    const what = `${req.method} ${m[2] ?? ''}`;
    if (what === 'PUT ') {
      if (collection) return error(409, `Wrong input: Collection \`${name}\` already exists!`);
      const vectors = (body as { vectors?: { size?: number; distance?: string } } | null)?.vectors;
      if (typeof vectors?.size !== 'number')
        return error(400, 'Format error in JSON body: missing field `vectors`');
      this.collections.set(name, {
        size: vectors.size,
        distance: vectors.distance ?? 'Cosine',
        config: body as Record<string, unknown>,
        points: new Map(),
      });
      return ok(true);
    }
    if (!collection) return error(404, `Not found: Collection \`${name}\` doesn't exist!`);
    if (what === 'GET ')
      return ok({
        status: 'green',
        points_count: collection.points.size,
        config: { params: { vectors: { size: collection.size, distance: collection.distance } } },
      });
    if (what === 'PUT /points') {
      const points = (body as { points?: QdrantPoint[] } | null)?.points ?? [];
      for (const p of points) {
        if (p.vector.length !== collection.size)
          return error(
            400,
            `Wrong input: Vector dimension error: expected dim: ${collection.size}, got ${p.vector.length}`,
          );
      }
      for (const p of points) collection.points.set(String(p.id), p);
      return ok({ operation_id: this.requests.length, status: 'completed' });
    }
    if (what === 'POST /points/search') {
      const q = body as {
        vector: number[];
        limit: number;
        filter?: Filter;
        with_payload?: string[] | boolean;
      };
      if (q.vector.length !== collection.size)
        return error(
          400,
          `Wrong input: Vector dimension error: expected dim: ${collection.size}, got ${q.vector.length}`,
        );
      const hits = [...collection.points.values()]
        .filter((p) => matches(p.payload, q.filter))
        .map((p) => ({
          id: p.id,
          version: 0,
          score: cosine(q.vector, p.vector),
          payload: keep(p.payload, q.with_payload),
        }))
        .sort((a, b) => b.score - a.score)
        .slice(0, q.limit);
      return ok(hits);
    }
    return error(404, `Not found: ${req.method} ${path}`);
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

const valueAt = (payload: Record<string, unknown>, key: string): unknown =>
  key
    .split('.')
    .reduce<unknown>(
      (v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined),
      payload,
    );

function holds(payload: Record<string, unknown>, c: Condition): boolean {
  const v = valueAt(payload, c.key ?? '');
  const values = Array.isArray(v) ? v : [v];
  if (c.match && 'value' in c.match) return values.includes(c.match.value);
  if (Array.isArray(c.match?.any)) return values.some((x) => c.match?.any?.includes(x));
  return false;
}

function matches(payload: Record<string, unknown>, filter: Filter | undefined): boolean {
  if (!filter) return true;
  if (filter.must && !filter.must.every((c) => holds(payload, c))) return false;
  if (filter.should && filter.should.length > 0 && !filter.should.some((c) => holds(payload, c)))
    return false;
  if (filter.must_not?.some((c) => holds(payload, c))) return false;
  return true;
}

function keep(payload: Record<string, unknown>, keys: string[] | boolean | undefined) {
  if (!Array.isArray(keys)) return keys === false ? {} : payload;
  return Object.fromEntries(keys.filter((k) => k in payload).map((k) => [k, payload[k]]));
}
