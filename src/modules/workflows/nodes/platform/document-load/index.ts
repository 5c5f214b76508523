import { Type } from 'typebox';
import { defineNode, type NodeExecutionContext, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { PlatformCallFields, type PlatformCallParams, platformPost } from '../platform-call.js';

/**
 * Nodes over the knowledge base (`docproc`), called like any other platform service (platform-call.ts):
 * at `DOCPROC_URL` with a credential holding a platform key of `docproc`.
 */
const DOCPROC = { service: 'docproc', label: 'document service', urlEnv: 'DOCPROC_URL' } as const;

const post = <P>(ctx: NodeExecutionContext<P>, p: PlatformCallParams, path: string, body: unknown) =>
  platformPost(ctx, DOCPROC, p, path, body);

const DocumentLoadParameters = Type.Object({
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
  ...PlatformCallFields,
});

const KnowledgeQueryParameters = Type.Object({
  query: Type.String({ minLength: 1 }),
  topK: Type.Integer({ minimum: 1, maximum: 50, default: 5 }),
  topics: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  mode: Type.Enum(['hybrid', 'vector', 'keyword'] as const, { default: 'hybrid' }),
  minScore: Type.Optional(Type.Number()),
  ...PlatformCallFields,
});

/** Loads a document into the knowledge base (and by default processes it), one per item. */
export const documentLoadNode = defineNode({
  type: 'n8n-nodes-platform.documentLoad',
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
  type: 'n8n-nodes-platform.knowledgeQuery',
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
