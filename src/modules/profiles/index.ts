import type { AppContext, PlatformModule } from '../../core/context.js';
import { ProfileService } from './profile-service.js';
import { ProfileStore } from './profile-store.js';
import { type ProfileRouteDeps, profileRoutes } from './routes.js';
import type { ProfileViewT } from './schemas.js';
import './tables.js';
import { profilesMigrations } from './migrations/index.js';

type ProfileView = ProfileViewT;

/** What other modules (commerce's recommendations, the agents' `user_profile` tool) use of profiles. */
interface ProfilesApi {
  /** The user's profile in the account, null without one. */
  get(accountId: string, userId: string): Promise<ProfileView | null>;
}

declare module '../../core/context.js' {
  interface ModuleApis {
    profiles: ProfilesApi;
  }
}

type Welcome = (accountId: string, userId: string, displayName: string) => Promise<unknown>;

/**
 * The agents module's welcome, when it offers one. Agents come after profiles in module order,
 * so it is looked up when a user registers, not at boot.
 */
function welcomeOf(ctx: AppContext): Welcome | undefined {
  const agents = (ctx.apis as { agents?: { welcome?: Welcome } }).agents;
  return agents?.welcome?.bind(agents);
}

const internals = new WeakMap<AppContext, ProfileRouteDeps>();

/** User profiles of the agent API (`/api/users`, issue 15). */
export const profilesModule: PlatformModule = {
  name: 'profiles',
  services: ['agent'],
  migrations: profilesMigrations,

  init(ctx) {
    const commerce = ctx.apis.commerce;
    const cart = ctx.apis.cart;
    const profiles = new ProfileService({
      store: new ProfileStore(ctx.db),
      clock: ctx.clock,
      ...(commerce ? { checkPreferences: (p) => commerce.checkPreferences(p) } : {}),
      ...(cart ? { ensureCart: (accountId, userId) => cart.ensureCart(accountId, userId) } : {}),
      async welcome(accountId, userId, displayName) {
        // The profile and cart are the registration; a welcome that fails is logged, not retried
        // by failing it (a repeated registration finds the profile and changes nothing).
        try {
          await welcomeOf(ctx)?.(accountId, userId, displayName);
        } catch (err) {
          ctx.log.error({ err, userId }, 'recording the welcome message of a new user failed');
        }
      },
    });
    internals.set(ctx, { profiles });
    ctx.apis.profiles = { get: (accountId, userId) => profiles.find(accountId, userId) };
  },

  routes(app, ctx) {
    const deps = internals.get(ctx);
    if (!deps) throw new Error('profiles module not initialised');
    profileRoutes(app, deps);
  },
};
