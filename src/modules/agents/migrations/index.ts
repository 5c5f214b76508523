import type { MigrationSet } from '../../../core/db/migrate.js';
import * as m901 from './901-agents.js';

/** The agents module's migrations, by name (the server and the CLI read this one list). */
export const agentsMigrations: MigrationSet = { '20261126_901_agents': m901 };
