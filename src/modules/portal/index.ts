import { type AppContext, type PlatformModule, requireApi } from '../../core/context.js';
import { SessionCookie } from './cookies.js';
import { LoginThrottle } from './login-throttle.js';
import { MemberService } from './member-service.js';
import { MemberStore } from './member-store.js';
import { MemberTokens } from './member-tokens.js';
import { portalMigrations } from './migrations/index.js';
import { type PortalRouteDeps, portalRoutes } from './routes.js';
import { SessionService } from './session-service.js';
import { SessionStore } from './session-store.js';

export type { MemberService } from './member-service.js';

/** What other modules (and the CLI) may use of the portal's accounts. */
export interface PortalApi {
  members: MemberService;
}

declare module '../../core/context.js' {
  interface ModuleApis {
    portal: PortalApi;
  }
}

const internals = new WeakMap<AppContext, PortalRouteDeps>();

function originOf(publicUrl: string): string {
  try {
    return new URL(publicUrl).origin;
  } catch {
    throw new Error(`PUBLIC_URL '${publicUrl}' is not an absolute URL (e.g. https://api.example.com)`);
  }
}

/**
 * People of an account (members with roles and passwords) and their browser sessions: the session
 * cookie authenticates every public route with the member's role, beside API keys.
 */
export const portalModule: PlatformModule = {
  name: 'portal',
  services: ['core'],
  migrations: portalMigrations,

  init(ctx) {
    const { config, clock } = ctx;
    const auth = requireApi(ctx, 'auth');
    const publicOrigin = originOf(config.PUBLIC_URL);
    const memberStore = new MemberStore(ctx.db);
    const sessions = new SessionService(new SessionStore(ctx.db), clock, ctx.secrets.derive('portal:csrf'), {
      ttlHours: config.SESSION_TTL_HOURS,
      idleMinutes: config.SESSION_IDLE_MINUTES,
    });
    const members = new MemberService({
      store: memberStore,
      sessions,
      links: new MemberTokens(memberStore, clock, config.PUBLIC_URL),
      clock,
      throttle: new LoginThrottle(ctx.limiter, {
        perEmail: config.LOGIN_ATTEMPTS_PER_WINDOW,
        perIp: config.LOGIN_ATTEMPTS_PER_IP,
        windowSeconds: config.LOGIN_WINDOW_SECONDS,
        emailMaxDelaySeconds: config.LOGIN_EMAIL_MAX_DELAY_SECONDS,
      }),
    });
    // Sessions authenticate on every process, whichever services it serves.
    auth.authenticator.useSessions(sessions, config.PUBLIC_URL);
    auth.onBootstrap((owner) => members.ensureOwner(owner));
    internals.set(ctx, {
      members,
      sessions,
      cookie: new SessionCookie(config.PUBLIC_URL.startsWith('https:')),
      publicOrigin,
      accountName: async (id) => (await auth.account(id))?.name ?? '',
      activity: ctx.apis.activity,
    });
    ctx.apis.portal = { members };
  },

  routes(app, ctx) {
    const deps = internals.get(ctx);
    if (!deps) throw new Error('portal module not initialised');
    portalRoutes(app, deps);
  },
};
