import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { docprocPost as post } from '../docproc-call.js';
import { PlatformCallFields } from '../platform-call.js';

const KnowledgeQueryParameters = Type.Object({
  query: Type.String({ minLength: 1 }),
  topK: Type.Integer({ minimum: 1, maximum: 50, default: 5 }),
  topics: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  mode: Type.Enum(['hybrid', 'vector', 'keyword'] as const, { default: 'hybrid' }),
  minScore: Type.Optional(Type.Number()),
  ...PlatformCallFields,
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
