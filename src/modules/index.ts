import type { PlatformModule } from '../core/context.js';
import type { MigrationSet } from '../core/db/migrate.js';
import { activityModule } from './activity/index.js';
import { agentsModule } from './agents/index.js';
import { authModule } from './auth/index.js';
import { cartModule } from './cart/index.js';
import { commerceModule } from './commerce/index.js';
import { documentsModule } from './documents/index.js';
import { flowsModule } from './flows/index.js';
import { gameModule } from './game/index.js';
import { healthModule } from './health/index.js';
import { llmModule } from './llm/index.js';
import { mcpModule } from './mcp/index.js';
import { portalModule } from './portal/index.js';
import { portalWebModule } from './portal-web/index.js';
import { profilesModule } from './profiles/index.js';
import { workflowsModule } from './workflows/index.js';

/** Every module, in dependency order: a module may use the APIs of those before it. */
export const allModules: readonly PlatformModule[] = [
  // First: its hooks (request log, audit trail) are in place before any route is registered.
  activityModule,
  authModule,
  // After auth: members' sessions authenticate through its authenticator.
  portalModule,
  // The portal's pages (/portal): static files, signed in through the portal module's sessions.
  portalWebModule,
  healthModule,
  gameModule,
  commerceModule,
  cartModule,
  workflowsModule,
  // After workflows: keys of `apiKeyCredential` models are workflow credentials.
  llmModule,
  // After llm: documents are embedded through its registry.
  documentsModule,
  // After documents and workflows: flows retrieve from the one and run the other.
  flowsModule,
  // User profiles, then agents: their tools read profiles, recommendations and workflows.
  profilesModule,
  agentsModule,
  // After workflows, documents and agents: their workflows, knowledge search and agents are its tools.
  mcpModule,
];

/** Migrations of every module, enabled or not: one schema serves any split of services. */
export function allMigrations(modules: readonly PlatformModule[]): MigrationSet {
  return Object.assign({}, ...modules.map((m) => m.migrations)) as MigrationSet;
}
