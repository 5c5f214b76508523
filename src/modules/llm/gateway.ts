import { createHash } from 'node:crypto';
import { mayUseModel, type Principal } from '../../core/auth/principal.js';
import { AppError } from '../../core/errors.js';
import type { ClientGone } from '../../core/http/stream-reply.js';
import type { Limiter } from '../../core/limits/limiter.js';
import { safeCause } from '../../core/redact.js';
import { estimateTokens, estimateTokensYielding, sumTokensYielding } from './builtin/tokens.js';
import type { AnswerCache, CachedAnswer } from './cache.js';
import type { ConfiguredModel, ModelPreset } from './model-file.js';
import type { ModelRegistry } from './registry.js';
import type { LlmCallRecord, LlmRequestLog } from './request-log.js';
import {
  budgetExceeded,
  budgetHeaders,
  type CallBudget,
  chatHold,
  embedHold,
  holdBudget,
} from './token-budget.js';
import {
  type CallAbort,
  type ChatEvent,
  type ChatProvider,
  type ChatRequest,
  type EmbedRequest,
  type EmbedResult,
  type ModelKind,
  type ProviderKind,
  type RelayAnswer,
  type RelayOutcome,
  type RelayRequest,
  type TokenUsage,
  type Unsupported,
  UpstreamError,
} from './types.js';

/** Who is calling, on which surface, and the signal that fires when their connection goes. */
export interface CallContext {
  principal: Principal;
  /** `chat`, `generate`, `embed`, `embeddings` (Ollama) or `chat.completions`, `embeddings` (OpenAI). */
  endpoint: string;
  stream: boolean;
  signal: AbortSignal;
  /**
   * The client's connection, when the call serves one: attempts follow it without an AbortSignal of
   * its own (`signal` is then made only if something reads it).
   */
  gone?: ClientGone;
}

/** The context of a call serving a client connection (an HTTP route's). */
export function callContext(
  principal: Principal,
  endpoint: string,
  stream: boolean,
  gone: ClientGone,
): CallContext {
  return {
    principal,
    endpoint,
    stream,
    gone,
    get signal() {
      return gone.signal;
    },
  };
}

/** Whether the caller went (without making the client's signal when the call has its connection). */
const callerGone = (ctx: CallContext): boolean => (ctx.gone ? ctx.gone.gone : ctx.signal.aborted);

/** An answer under way: the model that answered, and its events (the first already received). */
export interface ChatSession {
  model: ConfiguredModel;
  requested: string;
  cached: boolean;
  /** Response headers every surface sends: answering model, cache status, token budget. */
  headers: Record<string, string>;
  events: AsyncGenerator<ChatEvent, void, undefined>;
}

/** A same-dialect chat as the route gives it: the client's body, to be forwarded as it is. */
export interface RelayWire {
  dialect: RelayRequest['dialect'];
  stream: boolean;
  includeUsage: boolean;
  /** An Ollama `/api/generate` body (its upstream path), not a chat's. */
  generate?: boolean;
  /** The body for an upstream model name: the client's bytes, or them with the name rewritten. */
  bodyFor(upstreamModel: string): string | Buffer;
}

/** A relayed answer under way: the upstream's bytes (or frames) and the headers every surface sends. */
export type RelaySession = { model: ConfiguredModel; headers: Record<string, string> } & (
  | { stream: false; contentType: string; body: Buffer }
  | { stream: true; contentType: string; frames: AsyncGenerator<string, void, undefined> }
);

export interface EmbedAnswer extends EmbedResult {
  model: ConfiguredModel;
  headers: Record<string, string>;
  promptTokens: number;
  totalNs: number;
}

/** Resolves an `apiKeyCredential` to the key it holds (the owner account's encrypted credential). */
type CredentialResolver = (ref: string) => Promise<string | null>;

export interface GatewayDeps {
  registry: ModelRegistry;
  /** The created providers by kind (every configured model's provider is here: checked at boot). */
  providers: ReadonlyMap<ProviderKind, ChatProvider>;
  limiter: Limiter;
  log: LlmRequestLog;
  cache: AnswerCache | null;
  credentials: CredentialResolver;
  now: () => number;
}

/** The 400 for a field the model's provider would drop (nothing is accepted and dropped). */
const droppedError = (refused: Unsupported, model: ConfiguredModel) =>
  new AppError('VALIDATION_ERROR', `Invalid body: ${refused.field} ${refused.reason} (${model.name})`, {
    fields: [{ field: refused.field, message: refused.reason }],
  });

/** How many usable models a MODEL_NOT_FOUND names (the listing endpoints have them all). */
const MODELS_NAMED = 20;

/** Upstream statuses that are the caller's fault (context too long, bad parameters): passed on as 400. */
const CALLER_FAULT = new Set([400, 413, 422]);

/**
 * A created model's SYSTEM and PARAMETERs under the request's own: a system message or option the
 * caller sent wins, as with Ollama's Modelfile.
 */
function withPreset(request: Omit<ChatRequest, 'model'>, preset: ModelPreset): Omit<ChatRequest, 'model'> {
  const out = { ...request };
  if (preset.system !== undefined && !request.messages.some((m) => m.role === 'system')) {
    out.messages = [{ role: 'system', content: preset.system }, ...request.messages];
    if (request.generate && request.generate.system === undefined)
      out.generate = { ...request.generate, system: preset.system };
  }
  if (preset.options) {
    const extra = { ...preset.options.extra, ...request.options.extra };
    out.options = { ...preset.options, ...request.options };
    if (Object.keys(extra).length) out.options.extra = extra;
    else delete out.options.extra;
  }
  return out;
}

/** The prompt's estimated tokens (counted across event-loop turns: a prompt may be 20 MB). */
const promptTokensOf = (request: Omit<ChatRequest, 'model'>) =>
  estimateTokensYielding(
    request.messages.map((m) => m.content),
    '\n',
  );

/**
 * The gateway's use-cases: resolve and authorize the model, enforce the key's token budget, try
 * the model and its fallbacks until one answers, and record every call with its tokens.
 */
export class Gateway {
  /** Models that answered recently in this process, for `/api/ps`: name → last use (epoch ms). */
  readonly recentlyUsed = new Map<string, number>();
  /** Provider keys read from credentials in this process: redacted from every error, as configured ones are. */
  private readonly resolvedKeys = new Set<string>();

  constructor(private readonly deps: GatewayDeps) {}

  /** Every provider key this gateway knows (configured or resolved): none may reach a caller or a log. */
  private knownKeys(): string[] {
    const keys = [...this.resolvedKeys];
    for (const model of this.deps.registry.all(null)) if (model.apiKey) keys.push(model.apiKey);
    return keys;
  }

  /** An upstream's message as the caller's error may carry it: no known key, one short line. */
  private causeOf(error: UpstreamError): string {
    return safeCause(error.message, this.knownKeys());
  }

  get registry(): ModelRegistry {
    return this.deps.registry;
  }

  /** The model a principal asked for, or the error its clients understand. */
  resolve(principal: Principal, name: string, kind: ModelKind): ConfiguredModel {
    const model = this.deps.registry.get(name, principal.accountId);
    if (!model) {
      // An error that helps: the models this key may use (of the asked kind), or where to list them.
      const usable = this.deps.registry.visibleTo(principal, kind).map((m) => m.name);
      const shown = usable.slice(0, MODELS_NAMED);
      const more = usable.length > shown.length ? ` and ${usable.length - shown.length} more` : '';
      const hint =
        usable.length === 0
          ? 'this key may use no model of this kind'
          : `this key may use: ${shown.join(', ')}${more} (GET /v1/models or /api/tags lists them)`;
      throw new AppError('MODEL_NOT_FOUND', `model "${name}" not found; ${hint}`, {
        model: name,
        available: shown,
      });
    }
    if (!mayUseModel(principal, model.name))
      throw new AppError('FORBIDDEN', `This key may not use model "${model.name}"`, { model: model.name });
    if (model.kind !== kind) {
      const does = kind === 'chat' ? 'chat' : kind === 'embedding' ? 'embeddings' : 'moderation';
      throw new AppError('VALIDATION_ERROR', `"${model.name}" does not support ${does}`, {
        model: model.name,
        kind: model.kind,
      });
    }
    return model;
  }

  /**
   * What every call checks before it starts, for work that calls later (a queued job): the model is
   * the principal's to use, and its token budget is not spent. Throws the call's own errors.
   */
  async admit(principal: Principal, name: string, kind: ModelKind): Promise<void> {
    this.resolve(principal, name, kind);
    await this.checkBudget(principal);
  }

  /** Refuses a key whose token budget for the day is spent (or held); returns the budget headers otherwise. */
  private async checkBudget(principal: Principal): Promise<Record<string, string>> {
    const budget = principal.dailyTokenBudget;
    if (!principal.keyId || budget === null || budget === undefined) return {};
    const decision = await this.deps.limiter.readTokenBudget(principal.keyId, budget);
    if (!decision.allowed) throw budgetExceeded(decision, decision.held);
    return budgetHeaders(decision);
  }

  /** Admits a call against its key's token budget, holding what it may use until it ends. */
  private hold(principal: Principal, points: () => number): Promise<CallBudget> {
    return holdBudget(this.deps.limiter, principal, points);
  }

  private refusal(model: ConfiguredModel, request: Omit<ChatRequest, 'model'>) {
    const provider = this.deps.providers.get(model.provider);
    return provider?.unsupported?.({ ...request, model: model.upstreamModel }, model) ?? null;
  }

  private providerOf(model: ConfiguredModel): ChatProvider {
    const provider = this.deps.providers.get(model.provider);
    if (!provider) throw new UpstreamError(`no provider '${model.provider}' is running`, false);
    return provider;
  }

  private async withKey(model: ConfiguredModel): Promise<ConfiguredModel> {
    if (!model.apiKeyCredential || model.apiKey) return model;
    const apiKey = await this.deps.credentials(model.apiKeyCredential);
    if (!apiKey) throw new UpstreamError(`credential '${model.apiKeyCredential}' not found`, true);
    // Bounded: rotation adds keys, and old ones stay worth redacting for a while.
    if (this.resolvedKeys.size >= 100) this.resolvedKeys.clear();
    this.resolvedKeys.add(apiKey);
    return { ...model, apiKey };
  }

  private record(ctx: CallContext, model: string, fields: Partial<LlmCallRecord>): void {
    this.deps.log.record({
      accountId: ctx.principal.accountId,
      keyId: ctx.principal.keyId,
      endpoint: ctx.endpoint,
      model,
      answeredBy: null,
      provider: null,
      stream: ctx.stream,
      promptTokens: 0,
      completionTokens: 0,
      tokensEstimated: false,
      latencyMs: 0,
      ttftMs: null,
      status: 'error',
      httpStatus: 502,
      errorCode: null,
      cached: false,
      fallbacksTried: 0,
      ...fields,
    });
  }

  /** Turns the last upstream failure into the client's error, and records the failed call. */
  private failure(ctx: CallContext, requested: string, error: unknown, tried: string[], started: number) {
    const upstream = error instanceof UpstreamError ? error : null;
    const appError =
      upstream && !upstream.retryable && upstream.status !== undefined && CALLER_FAULT.has(upstream.status)
        ? new AppError('VALIDATION_ERROR', `The model refused the request: ${this.causeOf(upstream)}`, {
            upstreamStatus: upstream.status,
            tried,
          })
        : new AppError(
            'UPSTREAM_ERROR',
            `No model could answer: ${upstream ? this.causeOf(upstream) : 'the request failed'}`,
            { tried, ...(upstream?.status ? { upstreamStatus: upstream.status } : {}) },
          );
    this.record(ctx, requested, {
      latencyMs: this.deps.now() - started,
      httpStatus: appError.status,
      errorCode: appError.code,
      status: callerGone(ctx) ? 'canceled' : 'error',
      fallbacksTried: Math.max(0, tried.length - 1),
    });
    return appError;
  }

  /** Nothing is accepted and dropped: a field the model's provider cannot honour is a 400 naming it. */
  private refuseDropped(first: ConfiguredModel, request: Omit<ChatRequest, 'model'>): void {
    const refused = this.refusal(first, request);
    if (refused) throw droppedError(refused, first);
  }

  /**
   * A chat whose client speaks its models' dialect, forwarded as it came (docs/decisions.md,
   * "Same-dialect relay"): the same resolution, refusals, budget, fallbacks and record as `chat`,
   * without the neutral form in between. Null when the call is not for a relay (a created model's
   * preset, the answer cache, or a model in the chain whose provider speaks another dialect): then
   * `chat` serves it.
   */
  async relay(
    ctx: CallContext,
    name: string,
    asked: Omit<ChatRequest, 'model'>,
    wire: RelayWire,
  ): Promise<RelaySession | null> {
    const first = this.resolve(ctx.principal, name, 'chat');
    if (first.preset || (this.deps.cache && !ctx.stream && asked.options.temperature === 0)) return null;
    const chain = this.deps.registry.chain(first, ctx.principal.accountId);
    for (const model of chain)
      if (!this.deps.providers.get(model.provider)?.relays?.has(wire.dialect)) return null;
    this.refuseDropped(first, asked);
    const budget = await this.hold(ctx.principal, () => chatHold(asked));
    return budget.during(() => this.relayChain(ctx, first, chain, asked, wire, budget));
  }

  private async relayChain(
    ctx: CallContext,
    first: ConfiguredModel,
    chain: ConfiguredModel[],
    asked: Omit<ChatRequest, 'model'>,
    wire: RelayWire,
    budget: CallBudget,
  ): Promise<RelaySession> {
    const started = this.deps.now();
    const tried: string[] = [];
    let lastError: unknown = null;
    for (const candidate of chain) {
      if (callerGone(ctx)) break;
      if (candidate !== first && this.refusal(candidate, asked)) continue;
      tried.push(candidate.name);
      const attempt = attemptOf(ctx);
      try {
        const model = await this.withKey(candidate);
        const provider = this.providerOf(model);
        const answer = (await provider.relay?.(
          {
            dialect: wire.dialect,
            body: wire.bodyFor(model.upstreamModel),
            stream: wire.stream,
            includeUsage: wire.includeUsage,
            ...(wire.generate ? { generate: true } : {}),
          },
          model,
          attempt,
        )) as RelayAnswer;
        const call = {
          ctx,
          requested: first.name,
          model: candidate,
          request: asked,
          started,
          tried,
          attempt,
          budget,
        };
        const headers: Record<string, string> = { ...budget.headers, 'x-llm-model': candidate.name };
        if (!answer.stream) {
          const elapsed = this.deps.now() - started;
          attempt.done();
          this.recentlyUsed.set(candidate.name, Date.now());
          await this.settle(call, answer.outcome, 'success', null, elapsed);
          return {
            model: candidate,
            headers,
            stream: false,
            contentType: answer.contentType,
            body: answer.body,
          };
        }
        // The first frames arrive before the answer is the client's: a failure before them falls back.
        const firstFrames = await answer.frames.next();
        this.recentlyUsed.set(candidate.name, Date.now());
        return {
          model: candidate,
          headers,
          stream: true,
          contentType: answer.contentType,
          frames: this.followRelay(call, answer.frames, firstFrames, this.deps.now() - started),
        };
      } catch (error) {
        attempt.abort();
        lastError = error;
        if (error instanceof UpstreamError && !error.retryable) break;
      }
    }
    throw this.failure(ctx, first.name, lastError ?? new Error('the request was canceled'), tried, started);
  }

  /** Passes relayed frames on; records the call (and charges its tokens) when they end. */
  private async *followRelay(
    call: RelayCall,
    frames: AsyncGenerator<string, RelayOutcome, undefined>,
    first: IteratorResult<string, RelayOutcome>,
    ttft: number,
  ): AsyncGenerator<string, void, undefined> {
    let outcome: RelayOutcome | null = null;
    let status: 'success' | 'error' | 'canceled' = 'canceled';
    let errorCode: string | null = null;
    try {
      let next = first;
      while (!next.done) {
        yield next.value;
        next = await frames.next();
      }
      outcome = next.value;
      status = 'success';
    } catch (error) {
      status = callerGone(call.ctx) ? 'canceled' : 'error';
      errorCode = 'UPSTREAM_ERROR';
      if (error instanceof AppError) throw error;
      const why = error instanceof UpstreamError ? this.causeOf(error) : 'unexpected error';
      throw new AppError('UPSTREAM_ERROR', `The model failed mid-answer: ${why}`, { model: call.model.name });
    } finally {
      if (status === 'success') call.attempt.done();
      else {
        call.attempt.abort();
        void frames.return(undefined as never).catch(() => {});
      }
      await this.settle(call, outcome, status, errorCode, ttft);
    }
  }

  /** Records a relayed call with its tokens (counted from the text when the upstream sent none) and charges them. */
  private async settle(
    call: RelayCall,
    outcome: RelayOutcome | null,
    status: 'success' | 'error' | 'canceled',
    errorCode: string | null,
    ttft: number,
  ): Promise<void> {
    const usage = outcome?.usage ?? {
      promptTokens: await promptTokensOf(call.request),
      completionTokens: estimateTokens(outcome?.completionText() ?? ''),
      estimated: true,
    };
    this.record(call.ctx, call.requested, {
      answeredBy: call.model.name,
      provider: call.model.provider,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      tokensEstimated: usage.estimated,
      latencyMs: this.deps.now() - call.started,
      ttftMs: ttft,
      status,
      httpStatus: 200,
      errorCode,
      fallbacksTried: call.tried.length - 1,
    });
    await call.budget.settle(usage.promptTokens + usage.completionTokens).catch(() => {});
  }

  /** Opens a chat: the first model (or fallback) that produces its first event answers. */
  async chat(ctx: CallContext, name: string, asked: Omit<ChatRequest, 'model'>): Promise<ChatSession> {
    const first = this.resolve(ctx.principal, name, 'chat');
    const request = first.preset ? withPreset(asked, first.preset) : asked;
    this.refuseDropped(first, request);
    const cacheKey = this.cacheKeyOf(ctx, first, request);
    const hit = cacheKey ? this.deps.cache?.get(cacheKey) : undefined;
    if (hit) return this.cachedAnswer(ctx, first, hit);
    const budget = await this.hold(ctx.principal, () => chatHold(request));
    return budget.during(() => this.chatChain(ctx, first, request, cacheKey, budget));
  }

  /**
   * A cached answer costs no tokens, so it holds none: a key whose budget the holds of its calls in
   * flight fill still gets it (they are not touched); a key whose day is spent does not.
   */
  private async cachedAnswer(
    ctx: CallContext,
    first: ConfiguredModel,
    hit: CachedAnswer,
  ): Promise<ChatSession> {
    const started = this.deps.now();
    const { keyId, dailyTokenBudget: limit } = ctx.principal;
    let headers: Record<string, string> = {};
    if (keyId && limit !== null && limit !== undefined) {
      const decision = await this.deps.limiter.readTokenBudget(keyId, limit);
      if (!decision.allowed && !decision.held) throw budgetExceeded(decision);
      headers = budgetHeaders(decision);
    }
    const model = this.deps.registry.get(hit.model, ctx.principal.accountId) ?? first;
    this.record(ctx, first.name, {
      answeredBy: model.name,
      provider: model.provider,
      status: 'success',
      httpStatus: 200,
      cached: true,
      latencyMs: this.deps.now() - started,
      ttftMs: this.deps.now() - started,
    });
    return {
      model,
      requested: first.name,
      cached: true,
      headers: { ...headers, 'x-llm-model': model.name, 'x-llm-cache': 'hit' },
      events: replay(hit.events),
    };
  }

  private async chatChain(
    ctx: CallContext,
    first: ConfiguredModel,
    request: Omit<ChatRequest, 'model'>,
    cacheKey: string | null,
    budget: CallBudget,
  ): Promise<ChatSession> {
    const started = this.deps.now();
    const tried: string[] = [];
    let lastError: unknown = null;
    for (const candidate of this.deps.registry.chain(first, ctx.principal.accountId)) {
      if (callerGone(ctx)) break;
      // A fallback whose provider would drop a field the caller sent, or that does not read the
      // message's images or files, is not tried.
      if (candidate !== first && (this.refusal(candidate, request) || !readsParts(candidate, request)))
        continue;
      tried.push(candidate.name);
      const attempt = attemptOf(ctx);
      const signal = attempt.signal;
      try {
        const model = await this.withKey(candidate);
        const provider = this.providerOf(model);
        const iterable = await provider.chat(
          { ...request, model: model.upstreamModel, accountId: ctx.principal.accountId },
          model,
          signal,
        );
        const iterator = iterable[Symbol.asyncIterator]();
        const firstEvent = await iterator.next();
        this.recentlyUsed.set(candidate.name, Date.now());
        const headers: Record<string, string> = { ...budget.headers, 'x-llm-model': candidate.name };
        if (cacheKey) headers['x-llm-cache'] = 'miss';
        return {
          model: candidate,
          requested: first.name,
          cached: false,
          headers,
          events: this.follow(ctx, {
            requested: first.name,
            model: candidate,
            request,
            iterator,
            firstEvent,
            started,
            fallbacksTried: tried.length - 1,
            attempt,
            cacheKey,
            budget,
          }),
        };
      } catch (error) {
        attempt.abort();
        lastError = error;
        if (error instanceof UpstreamError && !error.retryable) break;
      }
    }
    throw this.failure(ctx, first.name, lastError ?? new Error('the request was canceled'), tried, started);
  }

  private cacheKeyOf(
    ctx: CallContext,
    model: ConfiguredModel,
    request: Omit<ChatRequest, 'model'>,
  ): string | null {
    if (!this.deps.cache || ctx.stream || request.options.temperature !== 0) return null;
    // Per account: one account's prompts must not be learnable from another's cache timing.
    return createHash('sha256')
      .update(JSON.stringify([ctx.principal.accountId, model.name, request]))
      .digest('base64url');
  }

  /** Passes the events on, measuring the first token and the usage, and records the call at the end. */
  private async *follow(
    ctx: CallContext,
    call: {
      requested: string;
      model: ConfiguredModel;
      request: Omit<ChatRequest, 'model'>;
      iterator: AsyncIterator<ChatEvent>;
      firstEvent: IteratorResult<ChatEvent>;
      started: number;
      fallbacksTried: number;
      attempt: Attempt;
      cacheKey: string | null;
      budget: CallBudget;
    },
  ): AsyncGenerator<ChatEvent, void, undefined> {
    const { model, iterator } = call;
    let ttft: number | null = null;
    let completionChars = '';
    let usage: TokenUsage | null = null;
    let outcome: 'success' | 'error' | 'canceled' = 'canceled';
    let errorCode: string | null = null;
    const cached: ChatEvent[] = [];
    try {
      let next = call.firstEvent;
      while (!next.done) {
        const event = next.value;
        if (ttft === null) ttft = this.deps.now() - call.started;
        if (event.type === 'delta') {
          if (event.content) completionChars += event.content;
          if (event.toolCalls) completionChars += JSON.stringify(event.toolCalls);
        } else {
          usage = event.usage ?? {
            promptTokens: await promptTokensOf(call.request),
            completionTokens: estimateTokens(completionChars),
            estimated: true,
          };
          event.usage = usage;
          // Before the yield: a consumer that has the whole answer may stop reading right here.
          outcome = 'success';
        }
        if (call.cacheKey) cached.push(event);
        yield event;
        if (event.type === 'done') break;
        next = await iterator.next();
      }
      if (outcome !== 'success')
        throw new UpstreamError('the model ended its answer without finishing', true);
    } catch (error) {
      outcome = callerGone(ctx) ? 'canceled' : 'error';
      errorCode = 'UPSTREAM_ERROR';
      if (error instanceof AppError) throw error;
      const why = error instanceof UpstreamError ? this.causeOf(error) : 'unexpected error';
      throw new AppError('UPSTREAM_ERROR', `The model failed mid-answer: ${why}`, { model: model.name });
    } finally {
      if (outcome === 'success') call.attempt.done();
      else {
        call.attempt.abort();
        void iterator.return?.().catch(() => {});
      }
      if (!usage) {
        usage = {
          promptTokens: await promptTokensOf(call.request),
          completionTokens: estimateTokens(completionChars),
          estimated: true,
        };
      }
      if (outcome === 'success' && call.cacheKey)
        this.deps.cache?.set(call.cacheKey, { model: model.name, events: cached });
      this.record(ctx, call.requested, {
        answeredBy: model.name,
        provider: model.provider,
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        tokensEstimated: usage.estimated,
        latencyMs: this.deps.now() - call.started,
        ttftMs: ttft,
        status: outcome,
        httpStatus: 200,
        errorCode,
        fallbacksTried: call.fallbacksTried,
      });
      await call.budget.settle(usage.promptTokens + usage.completionTokens).catch(() => {});
    }
  }

  private embedRefusal(model: ConfiguredModel, request: Omit<EmbedRequest, 'model'>) {
    const provider = this.deps.providers.get(model.provider);
    return provider?.embedUnsupported?.({ ...request, model: model.upstreamModel }, model) ?? null;
  }

  /** Embeddings, with the same resolution, refusals, budget, fallbacks and record as chat. */
  async embed(
    ctx: CallContext,
    name: string,
    input: string[],
    options: Omit<EmbedRequest, 'model' | 'input'> = {},
  ): Promise<EmbedAnswer> {
    const first = this.resolve(ctx.principal, name, 'embedding');
    const request = { input, ...options };
    const refused = this.embedRefusal(first, request);
    if (refused) throw droppedError(refused, first);
    const budget = await this.hold(ctx.principal, () => embedHold(input, options.tokens));
    return budget.during(() => this.embedChain(ctx, first, input, options, budget));
  }

  private async embedChain(
    ctx: CallContext,
    first: ConfiguredModel,
    input: string[],
    options: Omit<EmbedRequest, 'model' | 'input'>,
    budget: CallBudget,
  ): Promise<EmbedAnswer> {
    const request = { input, ...options };
    const started = this.deps.now();
    const tried: string[] = [];
    let lastError: unknown = null;
    for (const candidate of this.deps.registry.chain(first, ctx.principal.accountId)) {
      if (callerGone(ctx)) break;
      // As chat: a fallback that would drop a field the caller sent is not tried.
      if (candidate !== first && this.embedRefusal(candidate, request)) continue;
      tried.push(candidate.name);
      try {
        const model = await this.withKey(candidate);
        const result = await this.providerOf(model).embed(
          { ...request, model: model.upstreamModel },
          model,
          ctx.signal,
        );
        const promptTokens =
          result.promptTokens ??
          (options.tokens
            ? options.tokens.reduce((n, t) => n + t.length, 0)
            : await sumTokensYielding(input));
        const elapsed = this.deps.now() - started;
        this.recentlyUsed.set(candidate.name, Date.now());
        this.record(ctx, first.name, {
          answeredBy: candidate.name,
          provider: candidate.provider,
          promptTokens,
          tokensEstimated: result.promptTokens === null,
          latencyMs: elapsed,
          ttftMs: elapsed,
          status: 'success',
          httpStatus: 200,
          fallbacksTried: tried.length - 1,
        });
        await budget.settle(promptTokens).catch(() => {});
        return {
          ...result,
          promptTokens,
          model: candidate,
          totalNs: Math.round(elapsed * 1e6),
          headers: { ...budget.headers, 'x-llm-model': candidate.name },
        };
      } catch (error) {
        lastError = error;
        if (error instanceof UpstreamError && !error.retryable) break;
      }
    }
    throw this.failure(ctx, first.name, lastError ?? new Error('the request was canceled'), tried, started);
  }

  /** Moderation (OpenAI's `/v1/moderations`) through the model's provider, budgeted and recorded. */
  async moderate(
    ctx: CallContext,
    name: string,
    input: unknown,
  ): Promise<{ model: ConfiguredModel; results: unknown[]; headers: Record<string, string> }> {
    const first = this.resolve(ctx.principal, name, 'moderation');
    if (!this.deps.providers.get(first.provider)?.moderate)
      throw new AppError(
        'VALIDATION_ERROR',
        `Invalid body: body.model "${first.name}" has no moderation endpoint`,
        {
          fields: [{ field: 'body.model', message: 'has no moderation endpoint' }],
        },
      );
    const headers = await this.checkBudget(ctx.principal);
    const started = this.deps.now();
    try {
      const model = await this.withKey(first);
      const { results } = await (this.providerOf(model).moderate?.(input, model, ctx.signal) ??
        Promise.resolve({ results: [] }));
      this.record(ctx, first.name, {
        answeredBy: first.name,
        provider: first.provider,
        latencyMs: this.deps.now() - started,
        status: 'success',
        httpStatus: 200,
      });
      return { model: first, results, headers: { ...headers, 'x-llm-model': first.name } };
    } catch (error) {
      throw this.failure(ctx, first.name, error, [first.name], started);
    }
  }
}

/** A relayed call, as its record needs it. */
interface RelayCall {
  ctx: CallContext;
  requested: string;
  model: ConfiguredModel;
  request: Omit<ChatRequest, 'model'>;
  started: number;
  tried: string[];
  attempt: Attempt;
  budget: CallBudget;
}

/**
 * An attempt at one model, tied to the client: a relay's upstream request follows it by a plain
 * callback (`CallAbort`), and an AbortSignal is made only for a provider that asks for one (`signal`).
 */
interface Attempt extends CallAbort {
  /** The attempt as an AbortSignal (made on first use: a relay never asks). */
  readonly signal: AbortSignal;
  /** Ends the upstream request (failure, client gone). */
  abort(): void;
  /** The call ended well: nothing to abort, only the link to the client's signal to remove. */
  done(): void;
}

/**
 * Linked by hand: `AbortSignal.any` keeps every combined signal alive on Node 20, one per model call,
 * and aborting a finished call costs an exception object per request for nothing. A call serving a
 * connection follows it by a plain callback (no signal for the client at all); any other follows its
 * context's signal. The attempt's own AbortController and its EventTarget listener are made only if
 * a provider takes the signal (chat, not relay).
 */
function attemptOf(ctx: CallContext): Attempt {
  let controller: AbortController | null = null;
  let followers: Array<() => void> | null = null;
  let aborted = false;
  let reason: unknown;
  const fire = (why?: unknown): void => {
    if (aborted) return;
    aborted = true;
    reason = why;
    controller?.abort(why);
    const called = followers;
    followers = null;
    if (called) for (const follower of called) follower();
  };
  let unfollow: () => void;
  const gone = ctx.gone;
  if (gone) {
    unfollow = gone.follow(() => fire());
  } else {
    const parent = ctx.signal;
    const follow = () => fire(parent.reason);
    if (parent.aborted) fire(parent.reason);
    else parent.addEventListener('abort', follow, { once: true });
    unfollow = () => parent.removeEventListener('abort', follow);
  }
  return {
    get aborted() {
      return aborted;
    },
    get signal() {
      if (controller === null) {
        controller = new AbortController();
        if (aborted) controller.abort(reason);
      }
      return controller.signal;
    },
    follow(onAbort) {
      if (aborted) {
        onAbort();
        return () => {};
      }
      const list = followers ?? [];
      followers = list;
      list.push(onAbort);
      return () => {
        const at = list.indexOf(onAbort);
        if (at !== -1) list.splice(at, 1);
      };
    },
    abort() {
      unfollow();
      fire();
    },
    done() {
      unfollow();
    },
  };
}

async function* replay(events: readonly ChatEvent[]): AsyncGenerator<ChatEvent, void, undefined> {
  for (const event of events) yield event;
}

/** Whether a model's entry declares the inputs the request's messages carry (images, files). */
function readsParts(model: ConfiguredModel, request: Omit<ChatRequest, 'model'>): boolean {
  const inputs = model.inputs ?? ['text'];
  for (const message of request.messages) {
    if (message.images?.length && !inputs.includes('image')) return false;
    if (message.files?.length && !inputs.includes('file')) return false;
  }
  return true;
}
