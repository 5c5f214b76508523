import type { MigrationSet } from '../../../core/db/migrate.js';
import * as m301 from './301-workflows.js';
import * as m302 from './302-webhook-claims.js';
import * as m303 from './303-workflow-n8n-fields.js';
import * as m304 from './304-variables.js';
import * as m305 from './305-tags.js';
import * as m306 from './306-webhook-path-parameters.js';
import * as m307 from './307-dedupe-history.js';
import * as m308 from './308-schedules.js';
import * as m309 from './309-test-webhooks.js';
import * as m310 from './310-execution-quota.js';
import * as m314 from './314-credential-sharing.js';
import * as m315 from './315-workflow-archive.js';
import * as m318 from './318-execution-tags.js';
import * as m326 from './326-credential-oauth-states.js';
import * as m327 from './327-credential-oauth-renewals.js';

/** The workflows module's migrations, by name (the server and the CLI read this one list). */
export const workflowsMigrations: MigrationSet = {
  '20261123_301_workflows': m301,
  '20261124_302_webhook_claims': m302,
  '20261127_303_workflow_n8n_fields': m303,
  '20261127_304_variables': m304,
  '20261127_305_tags': m305,
  '20261128_306_webhook_path_parameters': m306,
  '20261128_307_dedupe_history': m307,
  '20261128_308_schedules': m308,
  '20261128_309_test_webhooks': m309,
  '20261129_310_execution_quota': m310,
  '20261129_314_credential_sharing': m314,
  '20261129_315_workflow_archive': m315,
  '20261130_318_execution_tags': m318,
  '20261130_326_credential_oauth_states': m326,
  '20261130_327_credential_oauth_renewals': m327,
};
