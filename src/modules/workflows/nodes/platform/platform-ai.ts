import { accountPrincipal } from '../../../../core/auth/principal.js';
import type { AppContext } from '../../../../core/context.js';
import { AppError } from '../../../../core/errors.js';
import type { Json, KnowledgeHit, PlatformAiAccess } from '../../engine/index.js';

/** Embedding calls of a run are not tied to a client connection. */
const NO_SIGNAL = new AbortController().signal;

/**
 * The knowledge base and the built-in embedders for one account's executions (EngineDeps.platformAi).
 * The documents and llm modules start after this one, so their APIs are read when a node calls; a
 * process without them answers with a clear error. Every call names `accountId`, bound here.
 */
export function platformAiFor(ctx: AppContext): (accountId: string) => PlatformAiAccess {
  const documents = () => {
    const api = ctx.apis.documents;
    if (!api) throw new Error('The knowledge base is not available in this process (documents module off)');
    return api;
  };
  return (accountId) => ({
    async searchKnowledge(input) {
      const { results } = await documents().knowledge.query(accountId, {
        query: input.query,
        topK: input.topK,
        topics: [input.topic],
        mode: input.mode,
        ...(input.minScore !== undefined ? { minScore: input.minScore } : {}),
      });
      const metadata = new Map<string, Record<string, Json>>();
      for (const id of new Set(results.map((r) => r.documentId))) {
        const doc = await documents()
          .documents.get(accountId, id, false)
          .catch(() => null);
        metadata.set(id, (doc?.metadata ?? {}) as Record<string, Json>);
      }
      return results.map(
        (r): KnowledgeHit => ({
          text: r.text,
          score: r.score,
          documentId: r.documentId,
          title: r.title ?? null,
          topic: r.topic,
          pageNumber: r.pageNumber ?? null,
          metadata: metadata.get(r.documentId) ?? {},
        }),
      );
    },
    async addKnowledge(input) {
      const { created, document } = await documents().ingest(accountPrincipal(accountId), {
        source: 'text',
        content: input.text,
        topic: input.topic,
        metadata: input.metadata,
        ...(input.title ? { title: input.title } : {}),
      });
      return { documentId: document.documentId, created, status: document.status };
    },
    async embed(texts, model) {
      const llm = ctx.apis.llm;
      if (!llm) throw new Error('The built-in embedders are not available in this process (llm module off)');
      const entry = llm.registry.get(model, accountId);
      if (entry?.provider !== 'builtin' || entry.kind !== 'embedding')
        throw new AppError('VALIDATION_ERROR', `'${model}' is not a built-in embedding model`);
      const answer = await llm.gateway.embed(
        {
          principal: accountPrincipal(accountId),
          endpoint: 'workflows.embed',
          stream: false,
          signal: NO_SIGNAL,
        },
        model,
        texts,
      );
      return answer.embeddings;
    },
  });
}
