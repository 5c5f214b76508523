import type { PlatformModule } from '../../core/context.js';

/** The agent API (issue 15): agents, conversations, messages, the WebSocket channel. Being written. */
export const agentsModule: PlatformModule = {
  name: 'agents',
  services: ['agent'],
  migrations: {},
  init() {},
};
