import type { MigrationSet } from '../../../core/db/migrate.js';
import * as m001 from './001-llm-requests.js';
import * as m002 from './002-llm-models.js';
import * as m003 from './003-llm-files-batches.js';
import * as m004 from './004-llm-models-accounts.js';

/** The llm module's migrations, by name (the server and the CLI read this one list). */
export const llmMigrations: MigrationSet = {
  '20261125_501_llm_requests': m001,
  '20261129_502_llm_models': m002,
  '20261129_503_llm_files_batches': m003,
  '20261130_504_llm_models_accounts': m004,
};
