import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { docprocPost as post } from '../docproc-call.js';
import { PlatformCallFields } from '../platform-call.js';

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
