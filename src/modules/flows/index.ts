import type { AppContext, PlatformModule } from '../../core/context.js';
import { cpuPoolOf } from '../../core/cpu/index.js';
import { apikeyRoutes } from './apikey-routes.js';
import { attachmentRoutes } from './attachment-routes.js';
import { documentStoreRoutes } from './document-store-routes.js';
import { FlowService } from './flow-service.js';
import { FlowStore } from './flow-store.js';
import { MAX_UPSERT_FILES } from './flowise/doc-store.js';
import { FlowiseObjects } from './flowise/objects.js';
import { toolSandbox } from './flowise/sandbox.js';
import { searchConfig, webLoaderConfig } from './flowise/search-config.js';
import { reconcileStoreHolds } from './flowise/store-holds.js';
import { flowiseRoutes } from './flowise-routes.js';
import { definitionLookups } from './lookups.js';
import { PredictionService } from './prediction-service.js';
import { type FlowRouteDeps, flowRoutes } from './routes.js';
import { UpsertService } from './upsert-service.js';

export { type DefinitionLookups, definitionLookups } from './lookups.js';

import './tables.js';
import { flowsMigrations } from './migrations/index.js';

/** What other modules (the workflow node, agents) use of flows. */
interface FlowsApi {
  flows: FlowService;
  predictions: PredictionService;
}

declare module '../../core/context.js' {
  interface ModuleApis {
    flows: FlowsApi;
  }
}

/** A loader's CSS selector on one page: cheerio's engine can take exponential time, the worker stops it. */
const SELECTOR_TIMEOUT_MS = 5_000;

const internals = new WeakMap<AppContext, FlowRouteDeps>();

export const flowsModule: PlatformModule = {
  name: 'flows',
  services: ['flow'],
  migrations: flowsMigrations,

  init(ctx) {
    const llm = ctx.apis.llm;
    if (!llm) throw new Error('The flows module needs the llm module');
    const documents = ctx.apis.documents ?? null;
    const workflows = ctx.apis.workflows ?? null;
    const store = new FlowStore(ctx.db);
    const lookups = definitionLookups(ctx, llm);
    const flows = new FlowService(store, lookups, ctx.clock);
    // Custom tools of chatflow agents run in the sandbox, bounded as the Code node is.
    const sandbox = toolSandbox(ctx.config.CODE_NODE_TIMEOUT_MS);
    ctx.onClose(() => sandbox.close());
    const knowledge = documents?.knowledge ?? null;
    const objects = new FlowiseObjects(ctx.db, ctx.clock);
    // Runtime variables are the caller's overrideConfig.vars: the server's environment is not exposed.
    const staticVars = async (accountId: string) => {
      const out: Record<string, string> = {};
      for (const v of await objects.list(accountId, 'variable'))
        if (v.body.type !== 'runtime' && typeof v.body.name === 'string')
          out[v.body.name] = String(v.body.value ?? '');
      return out;
    };
    const predictions = new PredictionService({
      flows,
      store,
      lookups,
      gateway: llm.gateway,
      knowledge,
      workflows: workflows?.direct ?? null,
      limiter: ctx.limiter,
      clock: ctx.clock,
      workflowTimeoutMs: ctx.config.WEBHOOK_RESPONSE_TIMEOUT_MS,
      plan: { gateway: llm.gateway, knowledge, sandbox, search: searchConfig(ctx.config) },
      staticVars,
    });
    internals.set(ctx, {
      flows,
      store,
      predictions,
      upserts: new UpsertService(
        flows,
        documents,
        objects,
        webLoaderConfig(ctx.config, { pool: cpuPoolOf(ctx), timeoutMs: SELECTOR_TIMEOUT_MS }),
        staticVars,
        // The canvas's credential (SearchApi, GitHub) is one of the account's store, the caller's to use.
        workflows ? (caller, ref) => workflows.credentials.revealFor(caller.accountId, ref, caller) : null,
      ),
      objects,
      predictionBodyLimit: ctx.config.LLM_BODY_LIMIT_BYTES,
      maxFileBytes: ctx.config.DOCUMENT_MAX_BYTES,
    });
    ctx.apis.flows = { flows, predictions };
    if (documents && ctx.config.WORKFLOW_WORKER) {
      const stop = reconcileStoreHolds({
        documents: documents.documents,
        objects,
        clock: ctx.clock,
        // An upload holds each file's document from its loading until its loader is saved: at most
        // every file's wait for processing, twice over, and never under an hour.
        settleMs: Math.max(60 * 60_000, 2 * MAX_UPSERT_FILES * ctx.config.DOCUMENT_PROCESS_WAIT_MS),
        onResult: (result) =>
          (result.corrected > 0 || result.deleted > 0) &&
          ctx.log.warn(result, 'document store holds set to what the loaders name'),
        onError: (err) => ctx.log.error({ err }, 'counting document store holds failed'),
      });
      ctx.onClose(stop);
    }
  },

  routes(app, ctx) {
    const deps = internals.get(ctx);
    if (!deps) throw new Error('flows module not initialised');
    flowRoutes(app, deps);
    flowiseRoutes(app, deps);
    const auth = ctx.apis.auth;
    apikeyRoutes(app, { flows: deps.flows, verifyApiKey: auth ? (value) => auth.verifyApiKey(value) : null });
    attachmentRoutes(app, {
      flows: deps.flows,
      documents: ctx.apis.documents ?? null,
      maxFileBytes: deps.maxFileBytes,
    });
    documentStoreRoutes(app, {
      objects: deps.objects,
      documents: ctx.apis.documents ?? null,
      maxFileBytes: deps.maxFileBytes,
    });
  },
};
