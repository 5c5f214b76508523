import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { Counter, Histogram, type Registry } from 'prom-client';
import { isAppError } from '../errors.js';

/** Methods Node's parser accepts are many; anything unusual is one label value, not one each. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Requests no route matched (404s, scans): one label value, never the raw URL. */
const UNMATCHED_ROUTE = '(unmatched)';

/** Seconds; from a cached key's sub-millisecond answer to a model's long completion. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120];

/**
 * Why a 429 was sent, from the errors the limiters throw. The messages are the platform's own
 * (core/http/auth-hook.ts `tooMany`, the token budget, the game throttle); a new one lands in `other`.
 */
function refusalReason(error: unknown): string {
  if (!isAppError(error)) return 'other';
  if ('tokenBudget' in error.details) return 'token_budget';
  if ('queueMax' in error.details) return 'upstream_queue';
  const message = error.message;
  if (message.startsWith('Daily request quota')) return 'daily_quota';
  if (message.startsWith('Rate limit per IP')) return 'ip';
  if (message.startsWith('Rate limit per endpoint')) return 'endpoint';
  if (message.startsWith('Too many failed authentication')) return 'auth_failures';
  return 'other';
}

/**
 * Counts every answer of the app by route pattern, method and status, with its latency, and the
 * 429s by reason. Labels come from the route table, so their number is bounded by it.
 */
export function instrumentHttp(app: FastifyInstance, registry: Registry): void {
  const requests = new Counter({
    name: 'platform_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'platform_http_request_duration_seconds',
    help: 'Time from the request to the end of its answer, by route pattern, method and status class',
    labelNames: ['route', 'method', 'status_class'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'platform_rate_limit_refusals_total',
    help: 'Requests refused with 429, by reason (daily_quota, ip, endpoint, auth_failures, token_budget, …)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const reasons = new WeakMap<FastifyRequest, string>();

  app.addHook('onError', async (request, _reply, error: FastifyError) => {
    if (isAppError(error) && error.status === 429) reasons.set(request, refusalReason(error));
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    const method = METHODS.has(request.method) ? request.method : 'OTHER';
    const status = reply.statusCode;
    requests.inc({ route, method, status: String(status) });
    duration.observe(
      { route, method, status_class: `${Math.floor(status / 100)}xx` },
      reply.elapsedTime / 1000,
    );
    if (status === 429) refusals.inc({ reason: reasons.get(request) ?? 'other' });
  });
}
