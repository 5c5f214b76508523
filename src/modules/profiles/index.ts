import type { PlatformModule } from '../../core/context.js';

/** User profiles of the agent API (`/api/users`): being written, see issue 15. */
export const profilesModule: PlatformModule = {
  name: 'profiles',
  services: ['agent'],
  migrations: {},
  init() {},
};
