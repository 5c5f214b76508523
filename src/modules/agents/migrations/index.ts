import type { MigrationSet } from '../../../core/db/migrate.js';
import * as m901 from './901-agents.js';
import * as m902 from './902-agent-runs.js';

/** The agents module's migrations, by name (the server and the CLI read this one list). */
export const agentsMigrations: MigrationSet = {
  '20261126_901_agents': m901,
  '20261129_902_agent_runs': m902,
};
