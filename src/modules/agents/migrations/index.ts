import type { MigrationSet } from '../../../core/db/migrate.js';
import * as m901 from './901-agents.js';
import * as m902 from './902-agent-runs.js';
import * as m903 from './903-agent-responses.js';
import * as m904 from './904-agent-memory.js';
import * as m905 from './905-agent-run-background.js';
import * as m906 from './906-agent-archival.js';
import * as m907 from './907-agent-run-approval-deadline.js';

/** The agents module's migrations, by name (the server and the CLI read this one list). */
export const agentsMigrations: MigrationSet = {
  '20261126_901_agents': m901,
  '20261129_902_agent_runs': m902,
  '20261129_903_agent_responses': m903,
  '20261129_904_agent_memory': m904,
  '20261129_905_agent_run_background': m905,
  '20261129_906_agent_archival': m906,
  '20261129_907_agent_run_approval_deadline': m907,
};
