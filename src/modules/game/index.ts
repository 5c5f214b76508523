import type { AppContext, PlatformModule } from '../../core/context.js';
import { ConnectionCache } from './connection-cache.js';
import { GameClient } from './game-client.js';
import { GameService } from './game-service.js';
import { ManifestCache } from './manifest-cache.js';
import { gameMigrations } from './migrations/index.js';
import { GameOAuth } from './oauth-service.js';
import { OAuthStates } from './oauth-state.js';
import { OutboundThrottle } from './outbound-throttle.js';
import { RedisSlots } from './redis-slots.js';
import { gameRoutes } from './routes.js';
import { gameSettings } from './settings.js';
import { GameStore } from './store.js';
import { LocalSlots, type SlotStore } from './throttle-slots.js';
import { TokenClient } from './token-client.js';
import { UserTokens } from './user-tokens.js';

/** The window of the outbound throttle: GAME_RATE_PER_SECOND requests per second. */
const THROTTLE_WINDOW_MS = 1_000;

/**
 * Slots each process takes ahead (one per 25/s of the rate: 1 at 25/s; none below 10/s, where every
 * slot counts; at most 8), only while as many more stay free for the other processes, and handed
 * back after 250 ms unused. A request on a slot taken ahead waits for no Redis round trip. A slot
 * taken ahead counts against the limit until it is used and answered: at 20/s of 25, two processes
 * keeping two each left the reserve too little room to refill, and about a third of the calls took
 * their slot over Redis; one each keeps all but a handful off the round trip (docs/decisions.md).
 */
function leaseAhead(ratePerSecond: number): { ahead: number; reserve: number; holdMs: number } {
  const ahead = ratePerSecond < 10 ? 0 : Math.min(8, Math.max(1, Math.floor(ratePerSecond / 25)));
  return { ahead, reserve: ahead, holdMs: 250 };
}

/** What other modules (e.g. workflow nodes) may use of the game module. */
interface GameApi {
  client: GameClient;
  service: GameService;
}

declare module '../../core/context.js' {
  interface ModuleApis {
    game: GameApi;
  }
}

interface GameInternals {
  service: GameService;
  oauth: GameOAuth;
}
const internals = new WeakMap<AppContext, GameInternals>();

export const gameModule: PlatformModule = {
  name: 'game',
  services: ['game'],
  migrations: gameMigrations,

  async init(ctx) {
    const settings = gameSettings(ctx.config);
    const local = new LocalSlots(settings.ratePerSecond, THROTTLE_WINDOW_MS);
    const slots: SlotStore = ctx.redis
      ? new RedisSlots(
          ctx.redis,
          `${ctx.config.REDIS_PREFIX}game:outbound`,
          settings.ratePerSecond,
          THROTTLE_WINDOW_MS,
          settings.timeoutMs + 5_000,
          {
            onError: (err) => ctx.log.warn({ err }, 'game throttle could not hand slots back'),
            ...leaseAhead(settings.ratePerSecond),
          },
        )
      : local;
    const throttle = new OutboundThrottle(slots, {
      queueMax: settings.queueMax,
      fallback: local,
      onStoreError: (err) => ctx.log.warn({ err }, 'game throttle store failed; limiting per process'),
    });
    ctx.onClose(() => throttle.close());
    const store = new GameStore(ctx.db);
    const box = ctx.secrets.box('game-oauth');
    const client = new GameClient(settings, throttle);
    ctx.onClose(() => client.close());
    const tokenClient = new TokenClient(settings, throttle);
    const states = new OAuthStates(ctx.secrets.derive('game-oauth-state'), store, box, ctx.clock);
    const connections = new ConnectionCache({
      store,
      box,
      ttlMs: ctx.config.KEY_CACHE_TTL_SECONDS * 1000,
      max: ctx.config.KEY_CACHE_MAX,
      now: () => ctx.clock.now().getTime(),
      redis: ctx.redis,
      channel: `${ctx.config.REDIS_PREFIX}game:connections:invalidate`,
      onError: (err) => ctx.log.warn({ err }, 'game connection cache: invalidation over Redis failed'),
    });
    await connections.start();
    ctx.onClose(() => connections.stop());
    const oauth = new GameOAuth({
      settings,
      store,
      connections,
      states,
      tokens: tokenClient,
      box,
      clock: ctx.clock,
    });
    const tokens = new UserTokens({
      store,
      box,
      connections,
      tokens: tokenClient,
      clock: ctx.clock,
      authRequired: (owner, message) => oauth.authRequired(owner, message),
    });
    const manifests = new ManifestCache(client, store, ctx.clock, ctx.log);
    const service = new GameService(settings, client, tokens, manifests);
    internals.set(ctx, { service, oauth });
    ctx.apis.game = { client, service };
  },

  routes(app, ctx) {
    const deps = internals.get(ctx);
    if (!deps) throw new Error('game module not initialised');
    gameRoutes(app, deps);
  },
};

// The endpoint table, for the workflow node that calls the game platform (typed operations).
export { GAME_ENDPOINTS } from './endpoint-table.js';
export type { GameEndpoint } from './endpoint-types.js';
