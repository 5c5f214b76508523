import type { MigrationSet } from '../../../core/db/migrate.js';
import * as m1001 from './1001-request-logs-audit.js';
import * as m1002 from './1002-request-logs-summary-index.js';

/** The activity module's migrations: the request log and the audit trail. */
export const activityMigrations: MigrationSet = {
  '20261129_1001_activity_request_logs_audit': m1001,
  '20261129_1002_activity_request_logs_summary_index': m1002,
};
