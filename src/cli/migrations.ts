/**
 * Every module's migrations, from each module's own list (its migrations/index.ts), without
 * importing the modules themselves: their index files load every route and schema of the platform, most
 * of a command's time.
 */

import type { MigrationSet } from '../core/db/migrate.js';
import { activityMigrations } from '../modules/activity/migrations/index.js';
import { agentsMigrations } from '../modules/agents/migrations/index.js';
import { authMigrations } from '../modules/auth/migrations/index.js';
import { cartMigrations } from '../modules/cart/migrations/index.js';
import { commerceMigrations } from '../modules/commerce/migrations/index.js';
import { documentsMigrations } from '../modules/documents/migrations/index.js';
import { flowsMigrations } from '../modules/flows/migrations/index.js';
import { gameMigrations } from '../modules/game/migrations/index.js';
import { llmMigrations } from '../modules/llm/migrations/index.js';
import { portalMigrations } from '../modules/portal/migrations/index.js';
import { profilesMigrations } from '../modules/profiles/migrations/index.js';
import { workflowsMigrations } from '../modules/workflows/migrations/index.js';

export const platformMigrations: MigrationSet = {
  ...activityMigrations,
  ...agentsMigrations,
  ...authMigrations,
  ...cartMigrations,
  ...commerceMigrations,
  ...documentsMigrations,
  ...flowsMigrations,
  ...gameMigrations,
  ...llmMigrations,
  ...portalMigrations,
  ...profilesMigrations,
  ...workflowsMigrations,
};
