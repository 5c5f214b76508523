import { Type } from 'typebox';
import { defineNode, type NodeExecutionContext, NodeOperationError, output } from '../engine/node-type.js';
import type { Item, Json } from '../engine/types.js';

/**
 * Nodes over the knowledge base (`docproc`). Like every node that reaches another service, they call it
 * over HTTP at its configured URL (`DOCPROC_URL`, this server by default) with a credential holding a
 * platform key, exactly as an outside caller would.
 */
const Common = {
  /** Credential (name or id) whose `{token}` is a platform key of the `docproc` service. */
  credential: Type.String({ minLength: 1 }),
  /** Base URL of the document service; default `$env.DOCPROC_URL`. */
  baseUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
  timeout: Type.Integer({ minimum: 1, maximum: 300_000, default: 120_000 }),
};

export const DocumentLoadParameters = Type.Object({
  source: Type.Enum(['url', 'text', 'markdown', 'html', 'pdf'] as const),
  url: Type.Optional(Type.String({ minLength: 1 })),
  content: Type.Optional(Type.String({ minLength: 1 })),
  title: Type.Optional(Type.String({ minLength: 1 })),
  topic: Type.Optional(Type.String({ minLength: 1 })),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  /** Also chunk, embed and index it, waiting for the end (the output is then the indexed document). */
  process: Type.Boolean({ default: true }),
  chunkSize: Type.Optional(Type.Integer({ minimum: 50, maximum: 20_000 })),
  embeddingModel: Type.Optional(Type.String({ minLength: 1 })),
  ...Common,
});

export const KnowledgeQueryParameters = Type.Object({
  query: Type.String({ minLength: 1 }),
  topK: Type.Integer({ minimum: 1, maximum: 50, default: 5 }),
  topics: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  mode: Type.Enum(['hybrid', 'vector', 'keyword'] as const, { default: 'hybrid' }),
  minScore: Type.Optional(Type.Number()),
  ...Common,
});

type CommonParams = { credential: string; baseUrl?: string; timeout: number };

async function post<P>(
  ctx: NodeExecutionContext<P>,
  p: CommonParams,
  path: string,
  body: unknown,
): Promise<Json> {
  const base = p.baseUrl ?? ctx.deps.env.DOCPROC_URL;
  if (!base) throw new NodeOperationError('No document service: set DOCPROC_URL or the baseUrl parameter');
  const cred = await ctx.credential(p.credential);
  const token = cred.token ?? cred.value;
  if (!token)
    throw new NodeOperationError('The credential holds no token (a platform key of the docproc service)');
  const res = await ctx.deps.http({
    method: 'POST',
    url: `${base.endsWith('/') ? base.slice(0, -1) : base}${path}`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    timeoutMs: p.timeout,
    credentialHeaders: ['authorization'],
  });
  let parsed: Json = null;
  try {
    parsed = JSON.parse(res.body) as Json;
  } catch {
    // reported below with the status
  }
  if (res.status < 200 || res.status >= 300) {
    const message =
      parsed && typeof parsed === 'object' && !Array.isArray(parsed) && typeof parsed.message === 'string'
        ? parsed.message
        : `status ${res.status}`;
    throw new NodeOperationError(`The document service refused: ${message}`, {
      description: res.body.slice(0, 1000),
    });
  }
  return parsed;
}

/** Loads a document into the knowledge base (and by default processes it), one per item. */
export const documentLoadNode = defineNode({
  type: 'documentLoad',
  schema: DocumentLoadParameters,
  async execute(ctx) {
    const out: Item[] = [];
    const items = ctx.items.length > 0 ? ctx.items : [{ json: {} }];
    for (let i = 0; i < items.length; i++) {
      const p = await ctx.params(i);
      const { process, chunkSize, embeddingModel, credential: _c, baseUrl: _b, timeout: _t, ...load } = p;
      const doc = (await post(ctx, p, '/api/documents/load', load)) as Record<string, Json>;
      // Pages stay in the service: an execution keeps the document's identity, not its text.
      const { pages: _pages, ...loaded } = doc;
      let result: Record<string, Json> = loaded;
      if (process) {
        const id = encodeURIComponent(String(doc.documentId));
        const body: Record<string, Json> = {};
        if (chunkSize !== undefined) body.chunkSize = chunkSize;
        if (embeddingModel !== undefined) body.embeddingModel = embeddingModel;
        result = (await post(ctx, p, `/api/documents/${id}/process?wait=true`, body)) as Record<string, Json>;
      }
      out.push({ json: result });
    }
    return output(out);
  },
});

/** Searches the knowledge base; one item per result. */
export const knowledgeQueryNode = defineNode({
  type: 'knowledgeQuery',
  schema: KnowledgeQueryParameters,
  async execute(ctx) {
    const out: Item[] = [];
    const items = ctx.items.length > 0 ? ctx.items : [{ json: {} }];
    for (let i = 0; i < items.length; i++) {
      const p = await ctx.params(i);
      const { credential: _c, baseUrl: _b, timeout: _t, ...query } = p;
      const answer = (await post(ctx, p, '/api/knowledge/query', query)) as { results?: Json[] };
      for (const result of answer.results ?? []) out.push({ json: result as Record<string, Json> });
    }
    return output(out);
  },
});
