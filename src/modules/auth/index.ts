import type { Principal } from '../../core/auth/principal.js';
import type { AppContext, PlatformModule } from '../../core/context.js';
import { PlatformAuthenticator } from './authenticator.js';
import { type BootstrapResult, bootstrapOwner, type OwnerStep } from './bootstrap.js';
import { CustomerTokens } from './customer-tokens.js';
import { KeyService } from './key-service.js';
import { KeyVerifier } from './key-verifier.js';
import { authMigrations } from './migrations/index.js';
import { authRoutes } from './routes.js';
import { AuthStore } from './store.js';
import { UsageLedger } from './usage.js';

export { crossOrigin, SESSION_COOKIE } from './authenticator.js';
export { BootstrapError, type OwnerStep } from './bootstrap.js';
export type { KeyService } from './key-service.js';

/** What other modules (and the CLI) may use of the auth module. */
export interface AuthApi {
  authenticator: PlatformAuthenticator;
  usage: UsageLedger;
  keys: KeyService;
  /** Verifies a raw API key value, e.g. a webhook's `X-API-Key`; throws 401. */
  verifyApiKey(value: string): Promise<Principal>;
  /**
   * A key's principal by id, as it is now (cached; 401 once revoked or expired): who pays for work
   * a key started and that runs later, e.g. a queued document job (its models, token budget).
   */
  keyPrincipal(keyId: string): Promise<Principal>;
  /** Creates the owner account and first key on an empty database. */
  bootstrap(): Promise<BootstrapResult>;
  /** Adds a step every bootstrap runs on the owner account (a later module's own rows for it). */
  onBootstrap(step: OwnerStep): void;
  /** The owner account (the first one made): the operator's, whose credentials operator settings name. */
  ownerAccountId(): Promise<string | null>;
  /** An account's id and name (the portal shows it), or null. */
  account(id: string): Promise<{ id: string; name: string } | null>;
}

declare module '../../core/context.js' {
  interface ModuleApis {
    auth: AuthApi;
  }
}

interface AuthInternals {
  keys: KeyService;
  tokens: CustomerTokens;
  usage: UsageLedger;
}
const internals = new WeakMap<AppContext, AuthInternals>();

export const authModule: PlatformModule = {
  name: 'auth',
  services: ['core'],
  migrations: authMigrations,

  async init(ctx) {
    const { config, clock } = ctx;
    const store = new AuthStore(ctx.db);
    const quotas = { development: config.QUOTA_DAILY_DEVELOPMENT, production: config.QUOTA_DAILY_PRODUCTION };
    const onError = (error: unknown) => ctx.log.error({ err: error }, 'auth background task failed');
    const verifier = new KeyVerifier({
      store,
      clock,
      quotaFor: (row) => row.daily_quota ?? quotas[row.type],
      cacheTtlSeconds: config.KEY_CACHE_TTL_SECONDS,
      cacheMax: config.KEY_CACHE_MAX,
      redis: ctx.redis,
      redisPrefix: config.REDIS_PREFIX,
      onError,
      onTouched: (id) => keys.forget(id),
    });
    await verifier.start();
    const { dataVersion } = ctx.database;
    const keys = new KeyService({
      store,
      clock,
      quotas,
      invalidate: (id) => verifier.invalidate(id),
      // Rows are reused only while the database says no one else wrote; caching off turns it off.
      ...(dataVersion && config.KEY_CACHE_TTL_SECONDS > 0
        ? { rowCache: { dataVersion: () => dataVersion.call(ctx.database), max: config.KEY_CACHE_MAX } }
        : {}),
    });
    const tokens = new CustomerTokens(
      ctx.secrets.derive('jwt:customer-tokens'),
      clock,
      {
        defaultSeconds: config.CUSTOMER_TOKEN_DEFAULT_TTL_SECONDS,
        maxSeconds: config.CUSTOMER_TOKEN_MAX_TTL_SECONDS,
      },
      (keyId) => verifier.verifyId(keyId),
    );
    const usage = new UsageLedger(ctx.db, clock, onError);
    usage.start(config.USAGE_FLUSH_SECONDS);
    ctx.onClose(async () => {
      await usage.stop();
      await verifier.stop();
    });
    const authenticator = new PlatformAuthenticator(verifier, tokens);
    internals.set(ctx, { keys, tokens, usage });
    const ownerSteps: OwnerStep[] = [];
    ctx.apis.auth = {
      authenticator,
      usage,
      keys,
      verifyApiKey: (value) => authenticator.verifyApiKey(value),
      keyPrincipal: async (keyId) => verifier.principalOf(await verifier.verifyId(keyId)),
      ownerAccountId: async () => (await store.firstAccount())?.id ?? null,
      account: async (id) => {
        const row = await store.accountById(id);
        return row ? { id: row.id, name: row.name } : null;
      },
      bootstrap: () =>
        bootstrapOwner(
          store,
          keys,
          { ownerEmail: config.PLATFORM_OWNER_EMAIL, bootstrapKey: config.PLATFORM_BOOTSTRAP_KEY },
          clock.now().toISOString(),
          ownerSteps,
        ),
      onBootstrap: (step) => {
        ownerSteps.push(step);
      },
    };
  },

  routes(app, ctx) {
    const deps = internals.get(ctx);
    if (!deps) throw new Error('auth module not initialised');
    authRoutes(app, deps);
  },
};
