import path from 'node:path';
import type { Principal } from '../../core/auth/principal.js';
import { blocksToMarkdown } from '../../core/blocks-markdown.js';
import type { AppContext, PlatformModule } from '../../core/context.js';
import { cpuPoolOf } from '../../core/cpu/index.js';
import { createOutboundHttp } from '../../core/http/outbound.js';
import { createQueue, jobs } from '../../core/queue/index.js';
import { accountPayer, type Payer } from './charging.js';
import { DocumentCpu } from './document-cpu.js';
import { DocumentService, type documentView, OPERATIONS, UNFINISHED_DELETE_MS } from './document-service.js';
import { KnowledgeService } from './knowledge-service.js';
import { topicLanguages } from './language.js';
import { type LoadInput, loadDocument } from './loaders/index.js';
import { DocumentProcessor, type Embedder } from './processor.js';
import { type DocumentRouteDeps, documentRoutes } from './routes.js';
import { DocumentStore } from './store.js';
import { workspaceReader } from './workspace-reader.js';

/** What owns a topic's documents, as the holds pass asks it (a document store, in flows). */
export type { TopicOwner } from './document-service.js';
/** HTML read in bounded workers, for the HTTP Request tool's "text" and "html" response optimizers. */
export { htmlReadableText, htmlSelectTexts } from './loaders/html.js';
/** PDF text and details in a bounded worker, for workflow nodes that read PDFs (n8n's Extract from File). */
export { type PdfDetails, readPdf } from './loaders/pdf.js';

import './tables.js';
import { documentsMigrations } from './migrations/index.js';

/** A document another module adds to the knowledge base (a flow's vector upsert). */
export interface IngestInput {
  source: 'text' | 'markdown' | 'html' | 'pdf';
  /** Text, or base64 for a PDF. */
  content: string;
  title?: string;
  topic: string;
  metadata?: Record<string, unknown>;
  chunkSize?: number;
}

/** What flows and agents use of the knowledge base: a query (its service class stays this module's). */
export type KnowledgeSearch = Pick<KnowledgeService, 'query'>;

/** What other modules (flows, agents, workflow nodes) use of the knowledge base. */
export interface DocumentsApi {
  documents: DocumentService;
  knowledge: KnowledgeService;
  /**
   * Loads, chunks, embeds and indexes a document, waiting up to DOCUMENT_PROCESS_WAIT_MS; the same
   * content already in the topic is the existing document (`created: false`), processed only if it
   * is not indexed yet. The embeddings are charged to the caller's key (charging.ts).
   */
  ingest(
    caller: Principal,
    input: IngestInput,
    options?: { hold?: boolean },
  ): Promise<{ created: boolean; processed: boolean; document: ReturnType<typeof documentView> }>;
  /**
   * Chunks, embeds and indexes a stored document again (its id kept), waiting as `ingest` does; the
   * embeddings charged to the caller's key.
   */
  reprocess(
    caller: Principal,
    documentId: string,
    options?: { chunkSize?: number },
  ): Promise<ReturnType<typeof documentView>>;
  /** A file's text through the document loaders (PDF extraction included), its pages joined; nothing stored. */
  extract(caller: Principal, input: Pick<IngestInput, 'source' | 'content'>): Promise<string>;
}

declare module '../../core/context.js' {
  interface ModuleApis {
    documents: DocumentsApi;
  }
}

const internals = new WeakMap<AppContext, DocumentRouteDeps>();
/** Embedding calls of jobs and queries are not tied to a client connection. */
const NO_SIGNAL = new AbortController().signal;

export const documentsModule: PlatformModule = {
  name: 'documents',
  services: ['docproc', 'agent'],
  migrations: documentsMigrations,

  async init(ctx) {
    const { config, clock, log } = ctx;
    const llm = ctx.apis.llm;
    if (!llm) throw new Error('The documents module needs the llm module');
    const store = new DocumentStore(ctx.db, ctx.database.dialect);
    // Every embedding goes through the gateway and is charged to whoever asked (charging.ts).
    const principalOf = async (payer: Payer): Promise<Principal> =>
      payer.keyId && ctx.apis.auth ? ctx.apis.auth.keyPrincipal(payer.keyId) : accountPayer(payer.accountId);
    const embed: Embedder = async (texts, model, payer) => {
      const principal = await principalOf(payer);
      const call = { principal, endpoint: 'documents.embed', stream: false, signal: NO_SIGNAL };
      const answer = await llm.gateway.embed(call, model, texts);
      return { vectors: answer.embeddings, model: answer.model.name };
    };
    // An unknown model is left to fail the job with its reason, as the processing API documents.
    const admit = async (principal: Principal, model: string) => {
      if (llm.registry.get(model, principal.accountId))
        await llm.gateway.admit(principal, model, 'embedding');
    };
    const knowledge = new KnowledgeService(
      store,
      embed,
      config.KNOWLEDGE_EMBEDDING_MODEL,
      config.KNOWLEDGE_VECTOR_CACHE_MB * 1024 * 1024,
      config.KNOWLEDGE_VECTOR_CACHE_ACCOUNT_PERCENT / 100,
      config.DATA_DIR === ':memory:'
        ? null
        : {
            dir: path.join(config.DATA_DIR, 'knowledge-cache'),
            maxBytes: config.KNOWLEDGE_SNAPSHOT_MAX_MB * 1024 * 1024,
          },
      { keyword: 1, vector: config.KNOWLEDGE_VECTOR_WEIGHT },
    );
    // In the background: snapshots of topics gone while the process was down go first (a deleted
    // topic's text never stays on disk), then the warming; the server answers meanwhile, and a query of
    // a topic being warmed shares its load.
    const warming = knowledge
      .prune()
      .then((n) => n > 0 && log.info({ files: n }, 'knowledge snapshots of deleted topics removed'))
      .catch((err: unknown) => log.warn({ err }, 'knowledge snapshot pruning failed'))
      .then(() => (config.KNOWLEDGE_WARM_TOPICS > 0 ? knowledge.warm(config.KNOWLEDGE_WARM_TOPICS) : 0))
      .then((n) => n > 0 && log.info({ topics: n }, 'knowledge cache warmed'))
      .catch((err: unknown) => log.warn({ err }, 'knowledge cache warming stopped'));
    ctx.onClose(async () => {
      await knowledge.close();
      await warming;
    });
    const invalidate = (accountId: string, topic: string) => knowledge.invalidate(accountId, topic);
    const queue = await createQueue(jobs.documentProcessing, {
      redisUrl: config.REDIS_URL,
      prefix: config.QUEUE_PREFIX,
      stallSeconds: config.QUEUE_STALL_SECONDS,
      onError: (err, jobId) => log.error({ err, jobId }, 'document processing job failed'),
      observer: ctx.jobEvents?.observe,
    });
    const cpu = new DocumentCpu({ pool: cpuPoolOf(ctx), timeoutMs: config.CPU_TASK_TIMEOUT_MS });
    const processor = new DocumentProcessor(
      store,
      cpu,
      embed,
      clock,
      invalidate,
      topicLanguages(config.KNOWLEDGE_LANGUAGE, config.KNOWLEDGE_TOPIC_LANGUAGES),
    );
    const documents = new DocumentService(store, queue, clock, (accountId, topic) =>
      knowledge.forget(accountId, topic),
    );
    if (config.WORKFLOW_WORKER) {
      queue.work((job) => processor.handle(job), config.DOCUMENT_CONCURRENCY);
      // Jobs queued or running when the process stopped run again (their parameters are on the rows).
      void documents
        .recover()
        .then((n) => n > 0 && log.info({ requeued: n }, 'document processing recovered'))
        .catch((err: unknown) => log.error({ err }, 'document processing recovery failed'));
      // A delete the database failed half-way is finished later, not only at the next start.
      const sweep = setInterval(() => {
        const before = new Date(clock.now().getTime() - UNFINISHED_DELETE_MS).toISOString();
        documents
          .finishDeletes(before)
          .then((n) => n > 0 && log.info({ deleted: n }, 'unfinished document deletes finished'))
          .catch((err: unknown) => log.error({ err }, 'finishing document deletes failed'));
      }, UNFINISHED_DELETE_MS);
      sweep.unref();
      ctx.onClose(() => clearInterval(sweep));
    }
    ctx.onClose(() => queue.close());
    const fetch = createOutboundHttp({
      allowHosts: config.OUTBOUND_ALLOW_HOSTS.split(',')
        .map((h) => h.trim())
        .filter(Boolean),
      timeoutMs: config.OUTBOUND_TIMEOUT_MS,
      maxResponseBytes: config.DOCUMENT_MAX_BYTES,
    });
    // WORKSPACE_API_URL is an operator setting: its host is trusted like the workflows' downstreams.
    const workspaceHost = (() => {
      try {
        return [new URL(config.WORKSPACE_API_URL).host];
      } catch {
        return [];
      }
    })();
    const workspace = workspaceReader({
      baseUrl: config.WORKSPACE_API_URL,
      http: createOutboundHttp({
        allowHosts: workspaceHost,
        timeoutMs: config.OUTBOUND_TIMEOUT_MS,
        maxResponseBytes: config.DOCUMENT_MAX_BYTES,
      }),
      timeoutMs: config.OUTBOUND_TIMEOUT_MS,
      token: async (accountId) => {
        const credential = await ctx.apis.workflows?.credentials.reveal(accountId, 'workspace-api-token');
        return credential?.data.token ?? null;
      },
      toMarkdown: (blocks) => blocksToMarkdown(blocks),
    });
    const load = (input: LoadInput, accountId: string) =>
      loadDocument(input, {
        fetch,
        maxBytes: config.DOCUMENT_MAX_BYTES,
        timeoutMs: config.OUTBOUND_TIMEOUT_MS,
        pdf: { timeoutMs: config.PDF_TIMEOUT_MS, maxPages: config.PDF_MAX_PAGES },
        workspace: workspace(accountId),
        text: (text, mimeType) => cpu.normalise(text, mimeType),
      });
    internals.set(ctx, {
      documents,
      knowledge,
      load,
      // Base64 inflates a document by a third.
      bodyLimit: Math.ceil(config.DOCUMENT_MAX_BYTES * 1.4) + 65_536,
      waitMs: config.DOCUMENT_PROCESS_WAIT_MS,
      admit,
      defaults: {
        chunkSize: config.DOCUMENT_CHUNK_SIZE,
        chunkOverlap: config.DOCUMENT_CHUNK_OVERLAP,
        embeddingModel: config.KNOWLEDGE_EMBEDDING_MODEL,
      },
    });
    /** Every operation, with the chunk size asked for (else the server's), charged to the caller's key. */
    const fullJob = (caller: Principal, size: number | undefined) => {
      const chunkSize = size ?? config.DOCUMENT_CHUNK_SIZE;
      return {
        operations: [...OPERATIONS],
        chunkSize,
        chunkOverlap: Math.min(config.DOCUMENT_CHUNK_OVERLAP, Math.floor(chunkSize / 2)),
        embeddingModel: config.KNOWLEDGE_EMBEDDING_MODEL,
        payerKeyId: caller.keyId,
      };
    };
    const extract: DocumentsApi['extract'] = async (caller, input) => {
      const loaded = await load({ source: input.source, content: input.content }, caller.accountId);
      return loaded.pages.map((p) => p.text).join('\n');
    };
    /** Every operation on a stored document, waiting up to DOCUMENT_PROCESS_WAIT_MS (then as it is). */
    const processWaiting = async (caller: Principal, id: string, chunkSize: number | undefined) => {
      const job = fullJob(caller, chunkSize);
      const done = await documents.processAndWait(caller.accountId, id, job, config.DOCUMENT_PROCESS_WAIT_MS);
      return done ?? (await documents.get(caller.accountId, id, false));
    };
    const ingest: DocumentsApi['ingest'] = async (caller, input, options = {}) => {
      const accountId = caller.accountId;
      await admit(caller, config.KNOWLEDGE_EMBEDDING_MODEL);
      const loaded = await load(
        { source: input.source, content: input.content, ...(input.title ? { title: input.title } : {}) },
        accountId,
      );
      const saved = await documents.create(
        accountId,
        {
          source: input.source,
          topic: input.topic,
          metadata: input.metadata ?? {},
          ...(input.title ? { title: input.title } : {}),
        },
        loaded,
        options,
      );
      // The same content already indexed is left alone; one that was loaded but never processed (or
      // failed) is processed now, so it is searchable after the call like a new one.
      if (!saved.created && (saved.document.status === 'indexed' || saved.document.processing))
        return { ...saved, processed: false };
      const id = saved.document.documentId;
      try {
        return {
          created: saved.created,
          processed: true,
          document: await processWaiting(caller, id, input.chunkSize),
        };
      } catch (error) {
        // The caller never learns the id of a document that failed: its hold goes back. One this
        // upload made, or one that loaders hold too, goes with its last hold; one it found unheld
        // (an upload of the documents API) is that upload's, failed or not, and stays.
        if (options.hold)
          await (saved.created || saved.shared
            ? documents.release(accountId, id)
            : documents.unhold(accountId, id)
          ).catch(() => undefined);
        throw error;
      }
    };
    const reprocess: DocumentsApi['reprocess'] = async (caller, id, options = {}) => {
      await admit(caller, config.KNOWLEDGE_EMBEDDING_MODEL);
      return processWaiting(caller, id, options.chunkSize);
    };
    ctx.apis.documents = { documents, knowledge, ingest, reprocess, extract };
    // The built-in extractive model answers from the account's knowledge base.
    llm.setRetriever({
      async retrieve(query, { accountId, limit }) {
        const { results } = await knowledge.query(accountId, { query, topK: limit, mode: 'hybrid' });
        return results.map((r) => ({ text: r.text, source: r.title ?? r.documentId, score: r.score }));
      },
    });
  },

  routes(app, ctx) {
    const deps = internals.get(ctx);
    if (!deps) throw new Error('documents module not initialised');
    documentRoutes(app, deps);
  },
};
