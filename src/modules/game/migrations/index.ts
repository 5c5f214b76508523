import type { MigrationSet } from '../../../core/db/migrate.js';
import * as m001 from './001-game-tables.js';
import * as m002 from './002-game-oauth-binding.js';
import * as m003 from './003-game-oauth-session-binding.js';

/** The game module's migrations, by name (the server and the CLI read this one list). */
export const gameMigrations: MigrationSet = {
  '20261123_001_game_tables': m001,
  '20261123_002_game_oauth_binding': m002,
  '20261129_003_game_oauth_session_binding': m003,
};
