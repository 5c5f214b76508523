import type { MigrationSet } from '../../../core/db/migrate.js';
import * as m001 from './001-accounts-keys.js';
import * as m002 from './002-key-llm-limits.js';

/** The auth module's migrations, by name (the server and the CLI read this one list). */
export const authMigrations: MigrationSet = {
  '20261122_001_auth_accounts_keys': m001,
  '20261125_002_auth_key_llm_limits': m002,
};
