import type { MigrationSet } from '../../../core/db/migrate.js';
import * as m001 from './001-members-sessions.js';

/** The portal module's migrations, by name (the server and the CLI read this one list). */
export const portalMigrations: MigrationSet = {
  '20261129_001_portal_members_sessions': m001,
};
