import { Ajv, type Options as AjvOptions } from 'ajv';
import addFormats from 'ajv-formats';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { type Config, enabledServices } from './config.js';
import { type Clock, systemClock } from './core/clock.js';
import type { AppContext, PlatformModule } from './core/context.js';
import { type DatabaseHandle, openDatabase } from './core/db/database.js';
import { migrateToLatest } from './core/db/migrate.js';
import { createAuthHook } from './core/http/auth-hook.js';
import { registerContentEncodingRule } from './core/http/content-encoding.js';
import { registerDeprecation } from './core/http/deprecation.js';
import { emptyPathParamCheck } from './core/http/empty-params.js';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './core/http/error-handler.js';
import { registerGracefulClose } from './core/http/graceful-close.js';
import { trustProxyOption } from './core/http/ip-rules.js';
import { strictJsonParser } from './core/http/json-body.js';
import { lazyCompilers } from './core/http/lazy-compile.js';
import { loggedPath } from './core/http/logged-path.js';
import { nulInUrl } from './core/http/nul-guard.js';
import { registerOpenApi, registerOpenApiRoute } from './core/http/openapi.js';
import { REDACTED_HEADERS, requestIdFrom } from './core/http/request-id.js';
import { lazyChildLogger, RequestLogController } from './core/http/request-logger.js';
import { serverTimeouts } from './core/http/server-timeouts.js';
import { processStreamCap, registerStreamSlots, StreamSlots } from './core/http/stream-slots.js';
import { withStrictNumbers } from './core/http/strict-numbers.js';
import { type CounterStore, memoryCounterStore } from './core/limits/counter-store.js';
import { Limiter } from './core/limits/limiter.js';
import { registerMetrics } from './core/metrics/index.js';
import { JobEvents } from './core/queue/index.js';
import { loadSecrets } from './core/secrets.js';
import { allMigrations, allModules } from './modules/index.js';
import { VERSION } from './version.js';

export interface BuildOptions {
  config: Config;
  /** An open database; otherwise one is opened from the config (and closed with the app). */
  database?: DatabaseHandle;
  clock?: Clock;
  /** false silences logs (tests). */
  logger?: boolean;
  modules?: readonly PlatformModule[];
  /** Skip migrations (the caller has run them). */
  skipMigrations?: boolean;
}

export interface Platform {
  app: FastifyInstance;
  ctx: AppContext;
  /**
   * Compiles the route schemas not compiled yet (each compiles on its route's first use: lazy-compile.ts);
   * returns how many. Tests call it to find a schema that does not compile.
   */
  compileSchemas: () => number;
}

function makeAjv(options: AjvOptions): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    ...options,
  });
  addFormats.default(ajv);
  return ajv;
}

/** The Redis client loads only when Redis is configured: the embedded default does not carry it. */
async function connectRedis(url: string, commandTimeoutMs: number): Promise<Redis> {
  const { Redis } = await import('ioredis');
  const { redisOptions } = await import('./core/queue/redis-options.js');
  const redis = new Redis(url, redisOptions(commandTimeoutMs));
  // Reconnecting is the client's job; whether Redis answers, the health probe's (core/queue) to say.
  redis.on('error', () => undefined);
  return redis;
}

/** Builds the whole platform: core plugins first, then each enabled module. */
export async function buildApp(options: BuildOptions): Promise<Platform> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const services = enabledServices(config);
  const modules = options.modules ?? allModules;
  // Validators and serializers compile on their route's first request, not before listen.
  const lazy = lazyCompilers();

  const app = Fastify({
    schemaController: { compilersFactory: { buildSerializer: lazy.serializerFactory } },
    logger:
      options.logger === false
        ? false
        : {
            level: config.LOG_LEVEL,
            redact: { paths: REDACTED_HEADERS.map((h) => `req.headers["${h}"]`), censor: '[redacted]' },
            serializers: {
              // Paths only: query strings may hold webhook secrets or OAuth codes; some paths a key.
              req: (req: { method: string; url: string; ip?: string; id: string }) => ({
                method: req.method,
                path: loggedPath(req.url),
                ip: req.ip,
              }),
            },
          },
    // One access line per request, and a request's child logger made only when it logs.
    ...(options.logger === false
      ? {}
      : { logController: new RequestLogController(), childLoggerFactory: lazyChildLogger }),
    genReqId: requestIdFrom,
    trustProxy: trustProxyOption(config.TRUST_PROXY),
    bodyLimit: config.BODY_LIMIT_BYTES,
    forceCloseConnections: 'idle',
    ...serverTimeouts(config),
    frameworkErrors,
    clientErrorHandler,
    routerOptions: { ignoreTrailingSlash: true },
  });

  // Bodies are checked strictly (no coercion: a wrong type is a 400); query, params and
  // headers arrive as strings, so they are coerced, numbers only from plain decimal digits.
  const bodyAjv = makeAjv({ coerceTypes: false });
  const textAjv = makeAjv({ coerceTypes: 'array' });
  app.setValidatorCompiler(
    lazy.validator(({ schema, httpPart }: { schema: unknown; httpPart?: string | undefined }) =>
      httpPart === 'body'
        ? bodyAjv.compile(schema as object)
        : withStrictNumbers(textAjv.compile(schema as object), schema),
    ),
  );

  const database =
    options.database ??
    (await openDatabase({
      databaseUrl: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      waitMs: config.DATABASE_WAIT_MS,
      statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
      log: app.log,
    }));
  const ownsDatabase = !options.database;
  if (!options.skipMigrations) await migrateToLatest(database.db, allMigrations(modules));

  const redis = config.REDIS_URL
    ? await connectRedis(config.REDIS_URL, config.REDIS_COMMAND_TIMEOUT_MS)
    : null;
  const store: CounterStore = redis
    ? (await import('./core/limits/redis-counter-store.js')).failoverRedisCounterStore(
        redis,
        config.REDIS_PREFIX,
        config.REDIS_COMMAND_TIMEOUT_MS,
        app.log,
      )
    : memoryCounterStore();
  const closers: Array<() => Promise<void> | void> = [];
  const streams = new StreamSlots(
    config.STREAMS_PER_KEY,
    processStreamCap(config.STREAMS_PER_PROCESS, config.STREAMS_RESERVED_SOCKETS),
  );
  const ctx: AppContext = {
    config,
    database,
    db: database.db,
    clock,
    limiter: new Limiter(store, clock),
    redis,
    secrets: loadSecrets(config.ENCRYPTION_KEY, config.DATA_DIR),
    services,
    log: app.log,
    apis: {},
    streams,
    jobEvents: new JobEvents(),
    onClose: (fn) => closers.push(fn),
  };

  app.decorateRequest('principal', null);
  // An empty path parameter (`/v1/api-keys/`, `//`) is a 404 on every route, not the collection.
  const emptyPathParam = emptyPathParamCheck(app);
  // One callback hook, not async ones, first on every request's path: no promise, no extra turn,
  // one hook call. The request id on every answer; then, before any other hook reads the path (the
  // webhook look-up runs on it, unauthenticated), a NUL in the URL and an empty path parameter.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    const refusal = nulInUrl(request.url) ?? emptyPathParam(request);
    if (refusal) done(refusal);
    else done();
  });
  app.addHook('onRoute', (route) => {
    const cfg = route.config as { auth?: unknown; public?: boolean } | undefined;
    if (!cfg?.auth && !cfg?.public && !route.url.startsWith('/reference')) {
      throw new Error(`Route ${route.method} ${route.url} declares neither config.auth nor config.public`);
    }
  });
  // Deprecated routes: headers on every answer and `deprecated` in OpenAPI (docs/versioning.md).
  registerDeprecation(app);
  // JSON is the one body type of the platform: anything else is a 415, not a string that fails
  // the schema. Modules that take raw bodies (webhooks) register their own parser in their scope.
  app.removeContentTypeParser('text/plain');
  // An empty body sent as JSON (clients that set the header on every call, DELETE included) is no
  // body, not a parse error; anything else goes to Fastify's parser and its prototype-poisoning checks.
  // Bytes are decoded strictly: invalid UTF-8 is a 400, not text silently holding U+FFFD.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, strictJsonParser());
  // A compressed body is a 415 on every route whose parser does not decode it (webhooks do).
  registerContentEncodingRule(app);

  // An absent body validates as `{}`: a 400 then names the missing fields, not "must be object".
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined && request.method !== 'GET' && request.method !== 'DELETE')
      request.body = {};
    done();
  });
  registerErrorHandling(app, { retryAfterSeconds: config.UNAVAILABLE_RETRY_AFTER_SECONDS });
  registerStreamSlots(app, streams);
  registerGracefulClose(app);
  await registerOpenApi(app, VERSION);
  registerOpenApiRoute(app);

  for (const module of modules) await module.init?.(ctx);
  const auth = ctx.apis.auth;
  if (!auth) throw new Error('The auth module is required');
  app.addHook(
    'onRequest',
    createAuthHook({
      authenticator: auth.authenticator,
      usage: auth.usage,
      limiter: ctx.limiter,
      limits: {
        windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS,
        perIp: config.RATE_LIMIT_PER_IP,
        perEndpoint: config.RATE_LIMIT_PER_ENDPOINT,
        authFailuresPerIp: config.AUTH_FAILURES_PER_IP,
      },
    }),
  );
  for (const module of modules) {
    const enabled = module.services.length === 0 || module.services.some((s) => services.has(s));
    if (enabled && module.routes) await module.routes(app, ctx);
  }
  // Off by default: the route does not exist unless enabled (docs/operations.md).
  if (config.METRICS_ENABLED) await registerMetrics(app, ctx);

  app.addHook('onClose', async () => {
    for (const fn of closers.reverse()) await fn();
    if (redis) await redis.quit().catch(() => undefined);
    if (ownsDatabase) await database.close();
  });
  return { app, ctx, compileSchemas: lazy.compileAll };
}
