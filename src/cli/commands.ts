/**
 * The commands that need only the auth and portal modules (`keys`, `users`, `migrate`), in one place so
 * that the build can bundle them, with their dependencies, into one file (`dist/cli-commands.js`,
 * scripts/ensure-build.mjs): loading TypeBox, Kysely and jose as ~1,000 separate ES module files was
 * most of `keys list`'s time on Node 20. `main.ts` loads that bundle when it exists, this file otherwise
 * (sources run with tsx, a build without esbuild). Error descriptions come from here too: the bundle has
 * its own copies of the error classes, so `instanceof` must be asked of the same copy.
 */
import { loadConfig } from '../config.js';
import { openDatabase } from '../core/db/database.js';
import { migrateToLatest } from '../core/db/migrate.js';
import { authModule } from '../modules/auth/index.js';
import { keysCommand } from './keys.js';
import { platformMigrations } from './migrations.js';
import { withPlatform } from './platform.js';

export { ConfigError } from '../config.js';
export { describeCliError } from './keys.js';

type Print = (line: string) => void;

export function runKeys(argv: string[], print: Print, printErr: Print): Promise<number> {
  return withPlatform([authModule], async (ctx) => {
    const auth = ctx.apis.auth;
    if (!auth) throw new Error('auth module missing');
    return keysCommand(auth, argv, print, printErr);
  });
}

export async function runUsers(argv: string[], print: Print, printErr: Print): Promise<number> {
  // Imported here, so that `keys` run from the sources loads no portal code (the bundle inlines both).
  const [{ portalModule }, { usersCommand }] = await Promise.all([
    import('../modules/portal/index.js'),
    import('./users.js'),
  ]);
  return withPlatform([authModule, portalModule], async (ctx) => {
    const { auth, portal } = ctx.apis;
    if (!auth || !portal) throw new Error('modules missing');
    return usersCommand({ auth, portal }, argv, print, undefined, printErr);
  });
}

export async function runMigrate(print: Print): Promise<number> {
  const config = loadConfig();
  const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  try {
    const results = await migrateToLatest(database.db, platformMigrations);
    print(
      results.length === 0
        ? 'Database is up to date'
        : results.map((r) => `${r.status}: ${r.migrationName}`).join('\n'),
    );
  } finally {
    await database.close();
  }
  return 0;
}
