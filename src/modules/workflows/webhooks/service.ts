import { createHash } from 'node:crypto';
import type { Clock } from '../../../core/clock.js';
import { AppError } from '../../../core/errors.js';
import { ipMatcher } from '../../../core/http/ip-rules.js';
import { newId } from '../../../core/ids.js';
import { queueUnavailable } from '../../../core/queue/queue-unavailable.js';
import { sameSecret } from '../../../core/secrets.js';
import { webhookNodesOf } from '../definitions/definitions.js';
import type { WebhookRoute, WorkflowStore } from '../definitions/store.js';
import { defaultTimezone, isTimeZone } from '../engine/expression-sandbox.js';
import {
  type BinaryData,
  type Json,
  trimSlashes,
  type WebhookNodeInfo,
  type WorkflowDefinition,
  type WorkflowEngine,
} from '../engine/index.js';
import type { ExecutionRunner } from '../executions/runner.js';
import { type ExecutionStore, QUEUE_OUTAGE_MESSAGE } from '../executions/store.js';
import type { ExecutionWaiters } from '../executions/waiters.js';
import { authenticateWebhook, type Redactions, type WebhookAuthDeps, type WebhookCaller } from './auth.js';
import { webhookBinary } from './binary.js';
import { isBotAgent } from './bot-agents.js';
import { headerOf, headersAsData, type WebhookCall } from './call.js';
import type { DeliveryStore } from './delivery-store.js';
import { type FormFiles, type FormValues, formItem, submittedAtOf } from './form-submission.js';
import { type StoredResponse, startedResponse, unansweredResponse } from './response.js';

export interface WebhookMatch {
  route: WebhookRoute;
  def: WorkflowDefinition;
  hook: WebhookNodeInfo;
  /** The values of the path's parameters (`users/:id` called as `users/42` → `{id: '42'}`). */
  params: Record<string, string>;
  /** Called at `/webhook-test/`: one call of a listening workflow, mode `test`. */
  test: boolean;
}

export interface WebhookServiceDeps {
  workflows: WorkflowStore;
  executions: ExecutionStore;
  deliveries: DeliveryStore;
  runner: ExecutionRunner;
  waiters: ExecutionWaiters;
  /** The account's engine: a dedupe key's expression runs in that account's sandbox share. */
  engineFor(accountId: string): WorkflowEngine;
  auth: WebhookAuthDeps;
  clock: Clock;
  responseTimeoutMs: number;
  /** While Redis is down, how long a caller waits for an execution no worker has taken (then 503). */
  queueOutageMs: number;
  dedupeHours: number;
}

/** How often a waiting call looks whether the queue is down and its execution still unstarted. */
const OUTAGE_CHECK_MS = 500;

/** The dedupe claim a call holds, freed when its execution is canceled for want of the queue. */
type Claim = { def: WorkflowDefinition; hook: WebhookNodeInfo; dedupeKey: string } | null;

/** Another process's (de)activation is seen within this time; this process's at once. */
const ROUTE_CACHE_MS = 1_000;

/** Turns an inbound webhook call into an execution and its answer. */
export class WebhookService {
  private readonly routes = new Map<string, { routes: WebhookRoute[]; at: number }>();
  private readonly dynamicRoutes = new Map<string, { routes: WebhookRoute[]; at: number }>();

  constructor(private readonly deps: WebhookServiceDeps) {}

  invalidate(paths: string[]): void {
    for (const path of paths) {
      this.routes.delete(path);
      // A template's prefix (its webhook id) keys the cache of routes with path parameters.
      if (path.includes(':')) this.dynamicRoutes.delete(path.split('/')[0] ?? '');
    }
  }

  /**
   * The active webhook for a method and path; 404 if none holds the path, 405 for another method.
   * A fixed path wins; else, as in n8n, the first segment is a webhook id whose paths with
   * parameters are tried, the one with the most fixed segments first. `test`: the workflows listening
   * at `/webhook-test/` (never cached: each listens for one call).
   */
  async match(method: string, rawPath: string, test = false): Promise<WebhookMatch> {
    const path = trimSlashes(rawPath);
    const base = test ? '/webhook-test' : '/webhook';
    const now = this.deps.clock.now().toISOString();
    const source = test
      ? {
          fixed: (p: string) => this.deps.workflows.testRoutesFor({ path: p }, now),
          dynamic: (prefix: string) => this.deps.workflows.testRoutesFor({ prefix }, now),
        }
      : {
          fixed: (p: string) => this.routesFor(p),
          dynamic: (prefix: string) => this.dynamicRoutesFor(prefix),
        };
    let routes = await source.fixed(path);
    let params: Record<string, string> = {};
    if (routes.length === 0) {
      const dynamic = await this.dynamicMatch(path, source.dynamic);
      routes = dynamic.routes;
      params = dynamic.params;
    }
    const notFound = () =>
      new AppError(
        'WEBHOOK_NOT_FOUND',
        test
          ? `No workflow listens on ${base}/${path}: call POST /api/v1/workflows/{id}/listen first`
          : `No active workflow listens on ${base}/${path}`,
        { path },
      );
    if (routes.length === 0) throw notFound();
    const wanted = method === 'HEAD' ? ['HEAD', 'GET'] : [method];
    const route = routes.find((r) => wanted.includes(r.method));
    if (!route) {
      const allowed = routes.map((r) => r.method).join(', ');
      throw new AppError(
        'METHOD_NOT_ALLOWED',
        `${base}/${path} accepts ${allowed}`,
        { allowed },
        { allow: allowed },
      );
    }
    const def = await this.deps.runner.definition(route.workflow_id, route.version);
    // A node may serve a path by two methods (the Chat Trigger's page and messages): the route's own first.
    const hooks = def ? webhookNodesOf(def).filter((h) => h.nodeName === route.node_name) : [];
    const hook = hooks.find((h) => h.httpMethod === route.method) ?? hooks[0];
    if (!def || !hook) {
      this.routes.delete(path);
      throw notFound();
    }
    return { route, def, hook, params, test };
  }

  /** The routes of the best-matching template with parameters, and the values the path gives them. */
  private async dynamicMatch(
    path: string,
    dynamicRoutesFor: (prefix: string) => Promise<WebhookRoute[]>,
  ): Promise<{ routes: WebhookRoute[]; params: Record<string, string> }> {
    const segments = path.split('/');
    if (segments.length < 2) return { routes: [], params: {} };
    const candidates = await dynamicRoutesFor(segments[0] ?? '');
    let best: { template: string; fixed: number } | null = null;
    for (const route of candidates) {
      const fixed = fixedSegmentsMatched(route.path.split('/'), segments);
      if (fixed !== null && (!best || fixed > best.fixed)) best = { template: route.path, fixed };
    }
    if (!best) return { routes: [], params: {} };
    const template = best.template.split('/');
    const params: Record<string, string> = {};
    template.forEach((part, i) => {
      if (part.startsWith(':')) params[part.slice(1)] = segments[i] ?? '';
    });
    return { routes: candidates.filter((r) => r.path === best.template), params };
  }

  private dynamicRoutesFor(prefix: string): Promise<WebhookRoute[]> {
    return this.cachedRoutes(this.dynamicRoutes, prefix, { prefix });
  }

  private routesFor(path: string): Promise<WebhookRoute[]> {
    return this.cachedRoutes(this.routes, path, { path });
  }

  /** The active routes for a key, read at most once per ROUTE_CACHE_MS per process. */
  private async cachedRoutes(
    cache: Map<string, { routes: WebhookRoute[]; at: number }>,
    name: string,
    key: { path: string } | { prefix: string },
  ): Promise<WebhookRoute[]> {
    const now = Date.now();
    const cached = cache.get(name);
    if (cached && now - cached.at < ROUTE_CACHE_MS) return cached.routes;
    const routes = await this.deps.workflows.routesFor(key);
    if (cache.size > 10_000) cache.clear();
    cache.set(name, { routes, at: now });
    return routes;
  }

  /** The webhook's answer, and headers the caller gets whatever it is (the key's quota). */
  async handle(
    call: WebhookCall,
    match: WebhookMatch,
    /** A streamed answer's writer (the hook's `streaming`): the execution's chunks. */
    stream?: StreamSink,
  ): Promise<{ response: StoredResponse; headers: Record<string, string> }> {
    if (match.hook.delivery) return this.handleDelivery(call, match);
    const allowed = match.hook.options.ipAllowList;
    if (allowed && allowed.length > 0 && !ipMatcher(allowed)(call.clientAddress))
      throw new AppError('FORBIDDEN', 'IP is not whitelisted to access the webhook!', {});
    refuseBots(call, match);
    const caller = await authenticateWebhook(call, match.hook, match.route.account_id, this.deps.auth);
    return { response: await this.run(call, match, caller, undefined, stream), headers: caller.headers };
  }

  /**
   * A service's delivery (`hook.delivery`: the Telegram Trigger's updates): its secret header checked
   * against the node's credential (403 when missing or wrong, n8n's "Provided secret is not valid";
   * 503 when the credential has nothing to derive it from),
   * then the body is the trigger's item; a delivery the node filters out starts nothing (200).
   */
  private async handleDelivery(
    call: WebhookCall,
    match: WebhookMatch,
  ): Promise<{ response: StoredResponse; headers: Record<string, string> }> {
    const { hook, route } = match;
    const delivery = hook.delivery;
    if (!delivery) throw new AppError('INTERNAL_ERROR', 'Not a delivery webhook');
    const credential = hook.credentialId
      ? await this.deps.auth.reveal(route.account_id, hook.credentialId)
      : null;
    if (!credential) throw new AppError('SERVICE_UNAVAILABLE', "The webhook's credential is missing");
    const expected = delivery.secretOf(credential.data);
    if (expected === null)
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        "The webhook's credential has no token to check deliveries with",
      );
    const given = headerOf(call, delivery.secretHeader);
    if (!given || !sameSecret(given, expected))
      throw new AppError('FORBIDDEN', 'Provided secret is not valid', { header: delivery.secretHeader });
    const body = call.body;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new AppError('VALIDATION_ERROR', 'A delivery is a JSON object', {
        problems: [{ path: 'body', message: 'must be a JSON object' }],
      });
    if (!delivery.accept(body))
      return { response: { kind: 'reply', statusCode: 200, headers: {}, body: {} }, headers: {} };
    const caller: WebhookCaller = {
      redact: { headers: [delivery.secretHeader], query: [] },
      identity: `credential:${hook.credentialId}`,
      headers: {},
    };
    return {
      response: await this.run(call, match, caller, { json: body as Record<string, Json> }),
      headers: {},
    };
  }

  /** A page a webhook node serves (the Chat Trigger's): its caller checked as a call would be; its headers. */
  async authorize(call: WebhookCall, match: WebhookMatch): Promise<Record<string, string>> {
    const allowed = match.hook.options.ipAllowList;
    if (allowed && allowed.length > 0 && !ipMatcher(allowed)(call.clientAddress))
      throw new AppError('FORBIDDEN', 'IP is not whitelisted to access the webhook!', {});
    refuseBots(call, match);
    return (await authenticateWebhook(call, match.hook, match.route.account_id, this.deps.auth)).headers;
  }

  /**
   * A form submission: checked against the form's fields (400 with each field's problem), then the
   * workflow starts with n8n's Form Trigger item (fields by label, `submittedAt`, `formMode`).
   */
  async handleForm(
    call: WebhookCall,
    match: WebhookMatch,
    values: FormValues,
    files: FormFiles = [],
  ): Promise<{ response: StoredResponse; headers: Record<string, string> }> {
    const form = match.hook.form;
    if (!form) throw new AppError('WEBHOOK_NOT_FOUND', 'No form listens here', {});
    const allowed = match.hook.options.ipAllowList;
    if (allowed && allowed.length > 0 && !ipMatcher(allowed)(call.clientAddress))
      throw new AppError('FORBIDDEN', 'IP is not whitelisted to access the webhook!', {});
    refuseBots(call, match);
    const caller = await authenticateWebhook(call, match.hook, match.route.account_id, this.deps.auth);
    const zone = form.useWorkflowTimezone ? workflowZone(match.def.settings) : 'UTC';
    const submitted = formItem(
      form,
      values,
      {
        // n8n's `submittedAt`: UTC ends in Z, another zone carries its offset (`useWorkflowTimezone`).
        submittedAt: submittedAtOf(this.deps.clock.now(), zone),
        formMode: match.test ? 'test' : 'production',
      },
      files,
    );
    if ('problems' in submitted)
      throw new AppError('VALIDATION_ERROR', 'The form has fields to correct', {
        problems: submitted.problems.map((p) => ({ path: p.label, message: p.message, field: p.field })),
      });
    if (form.showHeaders) submitted.json.headers = headersAsData(call, caller.redact.headers);
    // n8n's trigger keeps the page's query (a hidden field's value may come from it).
    if (Object.keys(call.query).length > 0) submitted.json.formQueryParameters = call.query as Json;
    return { response: await this.run(call, match, caller, submitted), headers: caller.headers };
  }

  private async run(
    call: WebhookCall,
    match: WebhookMatch,
    caller: WebhookCaller,
    given?: { json: Record<string, Json>; binary?: Record<string, BinaryData> },
    stream?: StreamSink,
  ): Promise<StoredResponse> {
    const { route, def, hook } = match;
    const { json, binary } = given ?? (await this.itemOf(call, match, caller.redact));
    if (caller.jwtPayload) json.jwtPayload = caller.jwtPayload as Json;

    const executionId = newId('exe');
    // A test listener serves one call: the first to delete its rows runs, in any process.
    if (match.test && !(await this.deps.workflows.consumeTest(def.id, this.deps.clock.now().toISOString())))
      throw new AppError('WEBHOOK_NOT_FOUND', 'The test webhook was used or expired: listen again', {
        workflowId: def.id,
      });
    const dedupeKey = match.test
      ? null
      : await this.dedupeKeyOf(route.account_id, def, hook, json, caller.identity);
    if (dedupeKey) {
      const at = this.deps.clock.now();
      const since = new Date(at.getTime() - this.deps.dedupeHours * 3_600_000).toISOString();
      const earlier = await this.deps.deliveries.claim(
        def.id,
        hook.nodeName,
        dedupeKey,
        executionId,
        at.toISOString(),
        since,
      );
      if (earlier) return this.repeat(hook, earlier.executionId, earlier.response, { def, hook, dedupeKey });
    }
    // Nothing can be queued while Redis does not answer: say so now, with nothing started.
    if (this.deps.waiters.redisDown()) {
      if (dedupeKey) await this.release(def.id, hook.nodeName, dedupeKey, executionId);
      throw queueUnavailable('unreachable');
    }

    const answers = hook.responseMode !== 'onReceived';
    const waiter = answers ? this.deps.waiters.wait(executionId, this.deps.responseTimeoutMs) : null;
    // Listening before the execution is queued: a worker may run it at once.
    const unlisten =
      waiter && stream && hook.streaming ? this.deps.waiters.listenChunks(executionId, stream.write) : null;
    try {
      await this.deps.runner.enqueue({
        id: executionId,
        accountId: route.account_id,
        workflowId: def.id,
        version: route.version,
        mode: match.test ? 'test' : 'webhook',
        trigger: {
          nodeName: hook.nodeName,
          items: [binary ? { json, binary } : { json }],
          ...(dedupeKey ? { dedupeKey } : {}),
        },
      });
    } catch (error) {
      // Not queued: the runner canceled the execution (a late job of it runs nothing), so a retry
      // with the same key must run.
      waiter?.cancel();
      unlisten?.();
      if (dedupeKey) await this.release(def.id, hook.nodeName, dedupeKey, executionId);
      throw error;
    }
    if (!waiter) {
      const response = startedResponse(hook, executionId);
      if (dedupeKey) {
        await this.deps.deliveries.setResponse(def.id, hook.nodeName, dedupeKey, JSON.stringify(response));
      }
      return response;
    }
    try {
      return await this.awaitResponse(
        executionId,
        waiter.promise,
        false,
        dedupeKey ? { def, hook, dedupeKey } : null,
      );
    } finally {
      unlisten?.();
    }
  }

  /** Frees a dedupe claim so the sender's retry runs; a failure leaves it to expire. */
  private async release(workflowId: string, nodeName: string, key: string, executionId: string) {
    await this.deps.deliveries.release(workflowId, nodeName, key, executionId).catch(() => undefined);
  }

  /** A repeated delivery: the first one's answer, waiting for it if the first is still running. */
  private async repeat(
    hook: WebhookNodeInfo,
    executionId: string,
    stored: string | null,
    claim: Claim,
  ): Promise<StoredResponse> {
    if (stored) return JSON.parse(stored) as StoredResponse;
    // The first delivery's answer is being written: for onReceived it is known already.
    if (hook.responseMode === 'onReceived') return startedResponse(hook, executionId);
    const waiter = this.deps.waiters.wait(executionId, this.deps.responseTimeoutMs);
    return this.awaitResponse(executionId, waiter.promise, true, claim);
  }

  /**
   * The execution's answer. Waiting is bounded: by WEBHOOK_RESPONSE_TIMEOUT_MS (504, it keeps
   * running) and, while Redis does not answer, by WEBHOOK_QUEUE_OUTAGE_MS for an execution no worker
   * has taken (503: it is canceled and its claim freed, so a retry runs it once).
   */
  private async awaitResponse(
    executionId: string,
    pending: Promise<string | null>,
    checkFirst: boolean,
    claim: Claim,
  ): Promise<StoredResponse> {
    if (checkFirst) {
      const row = await this.deps.executions.get(executionId);
      if (row?.response) return JSON.parse(row.response) as StoredResponse;
    }
    const watch = this.watchOutage(executionId, claim);
    let response: string | null;
    try {
      response = await Promise.race([pending, watch.unavailable]);
    } finally {
      watch.stop();
    }
    response ??= (await this.deps.executions.get(executionId))?.response ?? null;
    if (response) return JSON.parse(response) as StoredResponse;
    return unansweredResponse(executionId, await this.deps.executions.get(executionId));
  }

  /**
   * Resolves `unavailable` (with null: no answer) once Redis has been down and the execution still
   * unstarted for WEBHOOK_QUEUE_OUTAGE_MS since the wait began; the execution is canceled first, so
   * a late job of it runs nothing.
   */
  private watchOutage(executionId: string, claim: Claim): { unavailable: Promise<null>; stop(): void } {
    const since = Date.now();
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const unavailable = new Promise<null>((resolve) => {
      const check = async () => {
        if (stopped) return;
        if (this.deps.waiters.redisDown() && Date.now() - since >= this.deps.queueOutageMs) {
          const at = this.deps.clock.now().toISOString();
          const canceled = await this.deps.executions
            .cancelUnstarted(executionId, at, QUEUE_OUTAGE_MESSAGE)
            .catch(() => false);
          if (canceled) {
            if (claim) await this.release(claim.def.id, claim.hook.nodeName, claim.dedupeKey, executionId);
            resolve(null);
            return;
          }
        }
        if (!stopped) timer = setTimeout(() => void check(), OUTAGE_CHECK_MS);
      };
      timer = setTimeout(() => void check(), OUTAGE_CHECK_MS);
    });
    return {
      unavailable,
      stop: () => {
        stopped = true;
        clearTimeout(timer);
      },
    };
  }

  /** The trigger item: `{headers, params, query, body}` (+ `rawBody`, base64), secrets left out. */
  private async itemOf(
    call: WebhookCall,
    { hook, params }: WebhookMatch,
    redact: Redactions,
  ): Promise<{ json: Record<string, Json>; binary?: Record<string, BinaryData> }> {
    const query = { ...(call.query as Record<string, Json>) };
    for (const name of redact.query) delete query[name];
    const json: Record<string, Json> = {
      headers: headersAsData(call, redact.headers),
      params: { ...params },
      query,
      body: (call.body ?? {}) as Json,
    };
    const { body, binary } = await webhookBinary(
      hook,
      call.rawBody,
      call.headers['content-type'],
      call.body,
      call.headers['content-disposition'],
    );
    if (body !== undefined) json.body = body;
    if (hook.options.rawBody && hook.options.rawBodyAs === 'json')
      json.rawBody = call.rawBody.toString('base64');
    return binary ? { json, binary } : { json };
  }

  private async dedupeKeyOf(
    accountId: string,
    def: WorkflowDefinition,
    hook: WebhookNodeInfo,
    json: Record<string, Json>,
    identity: string,
  ): Promise<string | null> {
    if (!hook.options.dedupeKey) return null;
    let value: unknown;
    try {
      value = await this.deps.engineFor(accountId).evaluateExpression(def, hook.options.dedupeKey, json);
    } catch {
      return null;
    }
    if (value === null || value === undefined || value === '') return null;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    // Per caller: another caller sending the same key runs its own delivery and never gets this
    // caller's stored answer.
    return createHash('sha256').update(identity).update('\n').update(text).digest('base64url');
  }
}

/** A streamed answer (n8n's `responseMode: 'streaming'`): the execution's JSON lines as they come. */
export interface StreamSink {
  write(line: string): void;
}

/**
 * How many fixed segments of a template match a path of the same length, or null when one differs
 * (`id/users/:id` matches `id/users/42` with 2; n8n's own check ignores position, this one does not).
 */
function fixedSegmentsMatched(template: string[], segments: string[]): number | null {
  if (template.length !== segments.length) return null;
  let fixed = 0;
  for (let i = 0; i < template.length; i++) {
    const part = template[i] ?? '';
    if (part.startsWith(':')) {
      if ((segments[i] ?? '') === '') return null;
      continue;
    }
    if (part !== segments[i]) return null;
    fixed++;
  }
  return fixed;
}

/**
 * n8n's `ignoreBots` on a Form Trigger: a bot's user agent is refused before authentication, page and
 * submission alike, with n8n's answer (401 and its Basic challenge); the body says why.
 */
function refuseBots(call: WebhookCall, match: WebhookMatch): void {
  const agent = call.headers['user-agent'];
  // The Webhook node's (n8n: WebhookAuthorizationError(403) with its Basic challenge).
  if (match.hook.ignoreBots && isBotAgent(typeof agent === 'string' ? agent : undefined))
    throw new AppError(
      'FORBIDDEN',
      "This webhook does not serve bots (the Webhook's ignoreBots option): the user agent is a bot's",
      {},
      { 'www-authenticate': 'Basic realm="Webhook"' },
    );
  if (!match.hook.form?.ignoreBots) return;
  if (isBotAgent(typeof agent === 'string' ? agent : undefined))
    throw new AppError(
      'UNAUTHORIZED',
      "This form does not serve bots (the Form Trigger's ignoreBots option): the user agent is a bot's",
      {},
      { 'www-authenticate': 'Basic realm="Enter credentials"' },
    );
}

/** The workflow's zone (`settings.timezone`), else the instance's (GENERIC_TIMEZONE). */
function workflowZone(settings: Record<string, unknown> | undefined): string {
  const zone = settings?.timezone;
  return typeof zone === 'string' && zone !== '' && zone !== 'DEFAULT' && isTimeZone(zone)
    ? zone
    : defaultTimezone();
}
