import type { Principal } from '../../core/auth/principal.js';
import type { AppContext, PlatformModule } from '../../core/context.js';
import { cpuPoolOf } from '../../core/cpu/index.js';
import { strictJsonParser } from '../../core/http/json-body.js';
import { createQueue, jobs } from '../../core/queue/index.js';
import { anthropicRoutes } from './anthropic-routes.js';
import { BatchRunner } from './batches/batch-runner.js';
import { BatchService } from './batches/batch-service.js';
import { BatchStore } from './batches/batch-store.js';
import { FileStore } from './batches/file-store.js';
import { FilesService } from './batches/files-service.js';
import { AnswerCache } from './cache.js';
import { Gateway } from './gateway.js';
import { ManagedModels } from './managed-models.js';
import { configuredModels } from './model-file.js';
import { ModelManagement } from './model-management.js';
import { ollamaManageRoutes } from './ollama-manage-routes.js';
import { ollamaRoutes } from './ollama-routes.js';
import { openAiFilesRoutes } from './openai-files-routes.js';
import { openAiRoutes } from './openai-routes.js';
import { costUsd } from './pricing.js';
import { PROVIDER_CATALOGUE } from './providers/catalogue.js';
import { OllamaProvider } from './providers/ollama.js';
import { ModelRegistry } from './registry.js';
import { LlmRequestLog } from './request-log.js';
import { requestsRoutes } from './requests-routes.js';
import type { ChatProvider, EmbedResult, Retriever } from './types.js';
import './tables.js';
import { llmMigrations } from './migrations/index.js';

export type { Gateway } from './gateway.js';
export type { ModelRegistry } from './registry.js';
export {
  boundedOutput,
  type LoopEvent,
  type LoopModelAnswer,
  type LoopResult,
  runToolLoop,
  type ToolLoopHooks,
  type ToolLoopOptions,
} from './tool-loop.js';
export type {
  ChatEvent,
  ChatMessage,
  FileInput,
  Passage,
  Retriever,
  TokenUsage,
  ToolCall,
  ToolSpec,
} from './types.js';

/** What flows and agents use of the gateway: a chat call (its service class stays this module's). */
export type ChatGateway = Pick<Gateway, 'chat'>;

/** What other modules (the knowledge base, flows, agents) use of the language-model gateway. */
export interface LlmApi {
  registry: ModelRegistry;
  gateway: Gateway;
  log: LlmRequestLog;
  /**
   * Embeddings for the platform's own use (indexing a knowledge base): no key, budget or record,
   * the caller having checked its own. `model` defaults to `builtin/hashed-ngrams`.
   */
  embedTexts(texts: string[], options?: { model?: string; signal?: AbortSignal }): Promise<EmbedResult>;
  /** The knowledge base registers its retriever; the built-in extractive model answers from it. */
  setRetriever(retriever: Retriever | null): void;
}

declare module '../../core/context.js' {
  interface ModuleApis {
    llm: LlmApi;
  }
}

/** Default embedding model of the platform: fast, lexical, always there. */
export const DEFAULT_EMBEDDING_MODEL = 'builtin/hashed-ngrams';
const CREDENTIAL_CACHE_MS = 60_000;

interface Internals {
  gateway: Gateway;
  files: FilesService;
  batches: BatchService;
  management: ModelManagement;
  log: LlmRequestLog;
  startedAt: string;
}
const internals = new WeakMap<AppContext, Internals>();

/** Keys of `apiKeyCredential` models: the owner account's credential, re-read each minute (rotation). */
function credentialResolver(ctx: AppContext) {
  const cache = new Map<string, { value: string | null; until: number }>();
  return async (ref: string): Promise<string | null> => {
    const now = ctx.clock.now().getTime();
    const hit = cache.get(ref);
    if (hit && hit.until > now) return hit.value;
    const owner = await ctx.apis.auth?.ownerAccountId();
    const credential = owner ? await ctx.apis.workflows?.credentials.reveal(owner, ref) : null;
    const data = credential?.data ?? {};
    const value = data.apiKey ?? data.token ?? data.value ?? null;
    cache.set(ref, { value, until: now + CREDENTIAL_CACHE_MS });
    return value;
  };
}

export const llmModule: PlatformModule = {
  name: 'llm',
  services: ['llm'],
  migrations: llmMigrations,

  async init(ctx) {
    const config = ctx.config;
    const registry = new ModelRegistry(configuredModels(config));
    let retriever: Retriever | null = null;
    const deps = {
      retriever: () => retriever,
      log: ctx.log,
      // Large conversations and embedding batches are worked on off the event loop.
      cpu: { pool: cpuPoolOf(ctx), timeoutMs: config.CPU_TASK_TIMEOUT_MS },
    };
    // One of each provider of the catalogue (the built-in models are always in the registry).
    const providers = new Map<string, ChatProvider>();
    for (const definition of PROVIDER_CATALOGUE)
      providers.set(definition.kind, await definition.create(deps));
    ctx.onClose(async () => {
      for (const provider of providers.values()) await provider.close?.();
    });
    const log = new LlmRequestLog(ctx.db, ctx.clock, (err) =>
      ctx.log.error({ err }, 'llm request log flush failed'),
    );
    log.start(1);
    ctx.apis.auth?.usage.reportTokensFrom(async (accountId, filter) =>
      (await log.tokensByModel(accountId, filter)).map((row) => ({
        ...row,
        costUsd: costUsd(registry.get(row.model, accountId)?.pricing, row.promptTokens, row.completionTokens),
      })),
    );
    ctx.onClose(() => log.stop());
    const gateway = new Gateway({
      registry,
      providers,
      limiter: ctx.limiter,
      log,
      cache:
        config.LLM_CACHE_TTL_SECONDS > 0
          ? new AnswerCache(config.LLM_CACHE_TTL_SECONDS, config.LLM_CACHE_MAX_ENTRIES)
          : null,
      credentials: credentialResolver(ctx),
      now: () => performance.now(),
    });
    const defaultOllama = { ollamaUrl: config.OLLAMA_URL, timeoutMs: config.LLM_TIMEOUT_MS };
    const managed = new ManagedModels(
      registry,
      {
        all: () =>
          ctx.db
            .selectFrom('llm_models')
            .select(['account_id', 'name', 'spec'])
            .orderBy('account_id')
            .orderBy('name')
            .execute(),
        async put(account, name, spec, at) {
          await ctx.db
            .insertInto('llm_models')
            .values({ account_id: account, name, spec, created_at: at })
            .onConflict((oc) => oc.columns(['account_id', 'name']).doUpdateSet({ spec, created_at: at }))
            .execute();
        },
        async remove(account, name) {
          const result = await ctx.db
            .deleteFrom('llm_models')
            .where('account_id', '=', account)
            .where('name', '=', name)
            .executeTakeFirst();
          return Number(result.numDeletedRows) > 0;
        },
      },
      defaultOllama,
      () => ctx.clock.now(),
    );
    await managed.start();
    ctx.onClose(() => managed.stop());
    const ollama = providers.get('ollama');
    const management = new ModelManagement({
      registry,
      managed,
      ollama: ollama instanceof OllamaProvider ? ollama : undefined,
      defaultOllama,
      db: ctx.db,
      now: () => ctx.clock.now(),
      maxAccountBlobBytes: config.LLM_BLOBS_MAX_BYTES_PER_ACCOUNT,
      pullRegistries: config.OLLAMA_PULL_REGISTRIES.split(',')
        .map((r) => r.trim())
        .filter(Boolean),
    });
    const { files, batches } = await startBatches(ctx, gateway);
    internals.set(ctx, {
      gateway,
      files,
      batches,
      management,
      log,
      startedAt: ctx.clock.now().toISOString(),
    });
    ctx.apis.llm = {
      registry,
      gateway,
      log,
      async embedTexts(texts, options = {}) {
        const model = registry.get(options.model ?? DEFAULT_EMBEDDING_MODEL, null);
        if (model?.kind !== 'embedding')
          throw new Error(
            `embedding model '${options.model ?? DEFAULT_EMBEDDING_MODEL}' is not in the registry`,
          );
        const provider = providers.get(model.provider);
        if (!provider) throw new Error(`no provider '${model.provider}' is running`);
        return provider.embed(
          { model: model.upstreamModel, input: texts },
          model,
          options.signal ?? new AbortController().signal,
        );
      },
      setRetriever(next) {
        retriever = next;
      },
    };
  },

  async routes(app, ctx) {
    const deps = internals.get(ctx);
    if (!deps) throw new Error('llm module not initialised');
    const settings = { startedAt: deps.startedAt, bodyLimit: ctx.config.LLM_BODY_LIMIT_BYTES };
    // Ollama's own docs call it with `curl -d '{…}'`, whose content type is a form's: on its paths
    // such bodies are read as the JSON they are (through the platform's strict parser). Its chat and
    // generate relay the bytes they validated to Ollama upstreams, as OpenAI's chat does: kept.
    await app.register(async (scope) => {
      scope.removeContentTypeParser('application/json');
      scope.addContentTypeParser(
        ['application/json', 'application/x-www-form-urlencoded', 'text/plain'],
        { parseAs: 'buffer' },
        strictJsonParser({ keepBytes: true }),
      );
      ollamaRoutes(scope, deps.gateway, settings);
      ollamaManageRoutes(scope, deps.management);
    });
    // OpenAI's chat relays the bytes it validated (docs/decisions.md, "Same-dialect relay"): its
    // scope's JSON parser keeps them.
    await app.register(async (scope) => {
      scope.removeContentTypeParser('application/json');
      scope.addContentTypeParser(
        'application/json',
        { parseAs: 'buffer' },
        strictJsonParser({ keepBytes: true }),
      );
      openAiRoutes(scope, deps.gateway, settings);
    });
    openAiFilesRoutes(app, deps.files, deps.batches);
    anthropicRoutes(app, deps.gateway, settings);
    requestsRoutes(app, deps.log, deps.gateway.registry);
  },
};

/** A batch created by a session (no key) runs as its account: any model, no token budget of a key. */
function accountPrincipal(accountId: string): Principal {
  return {
    kind: 'session',
    accountId,
    keyId: null,
    keyType: null,
    services: ['llm'],
    role: 'Reader',
    scopes: [],
    customerId: null,
    dailyQuota: null,
    models: null,
    dailyTokenBudget: null,
    ipAllowed: null,
  };
}

/** OpenAI's files and batches: their stores, and the batch queue's worker where this process runs jobs. */
async function startBatches(ctx: AppContext, gateway: Gateway) {
  const { config, log } = ctx;
  const now = () => Math.floor(ctx.clock.now().getTime() / 1000);
  const fileStore = new FileStore(ctx.db);
  const batchStore = new BatchStore(ctx.db);
  const queue = await createQueue(jobs.llmBatch, {
    redisUrl: config.REDIS_URL,
    prefix: config.QUEUE_PREFIX,
    stallSeconds: config.QUEUE_STALL_SECONDS,
    onError: (err, jobId) => log.error({ err, jobId }, 'llm batch job failed'),
    observer: ctx.jobEvents?.observe,
  });
  const batches = new BatchService(
    batchStore,
    fileStore,
    (batchId, accountId) => queue.add(batchId, { batchId, accountId }),
    now,
  );
  if (config.WORKFLOW_WORKER) {
    const runner = new BatchRunner({
      batches: batchStore,
      files: fileStore,
      gateway,
      now,
      principalOf: async (batch) =>
        batch.key_id && ctx.apis.auth
          ? ctx.apis.auth.keyPrincipal(batch.key_id)
          : accountPrincipal(batch.account_id),
    });
    queue.work((job, _id, run) => runner.run(job.batchId, job.accountId, run.signal), 1);
    // Batches running when the process stopped run again (their input is on their rows).
    void batches
      .recover()
      .then((n) => n > 0 && log.info({ requeued: n }, 'llm batches recovered'))
      .catch((err: unknown) => log.error({ err }, 'llm batch recovery failed'));
  }
  ctx.onClose(() => queue.close());
  const quota = {
    maxBytes: config.LLM_FILES_MAX_BYTES_PER_ACCOUNT,
    maxFiles: config.LLM_FILES_MAX_PER_ACCOUNT,
  };
  return { files: new FilesService(fileStore, now, quota), batches };
}
