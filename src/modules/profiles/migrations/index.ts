import type { MigrationSet } from '../../../core/db/migrate.js';
import * as m801 from './801-profiles.js';

/** The profiles module's migrations, by name (the server and the CLI read this one list). */
export const profilesMigrations: MigrationSet = { '20261126_801_profiles': m801 };
