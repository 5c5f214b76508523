#!/usr/bin/env node
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { describeCliError, keysCommand } from './cli/keys.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './core/db/database.js';
import { migrateToLatest } from './core/db/migrate.js';
import { allMigrations, allModules } from './modules/index.js';

const print = (line: string) => process.stdout.write(`${line}\n`);

const HELP = `platform <command>
  serve                 start the HTTP server (default)
  migrate               run database migrations
  keys …                create | list | revoke | rotate API keys (see 'keys help')`;

async function serve(): Promise<void> {
  const config = loadConfig();
  const { app, ctx } = await buildApp({ config });
  const auth = ctx.apis.auth;
  if (!auth) throw new Error('auth module missing');
  const boot = await auth.bootstrap().catch(async (error: unknown) => {
    await app.close();
    throw error;
  });
  if (boot.createdKey) {
    // Printed once, to the terminal and never to the JSON log.
    print(`\nFirst start: owner account created. Admin API key (shown only now):\n\n  ${boot.createdKey}\n`);
  }
  closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS }, async ({ err, signal }) => {
    if (err) app.log.error({ err }, 'shutting down after error');
    else app.log.info({ signal }, 'shutting down');
    await app.close();
  });
  await app.listen({ port: config.PORT, host: config.HOST });
}

async function main(argv: string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv;
  switch (command) {
    case 'serve':
      await serve();
      return -1;
    case 'migrate': {
      const config = loadConfig();
      const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
      const results = await migrateToLatest(database.db, allMigrations(allModules));
      print(
        results.length === 0
          ? 'Database is up to date'
          : results.map((r) => `${r.status}: ${r.migrationName}`).join('\n'),
      );
      await database.close();
      return 0;
    }
    case 'keys': {
      const config = { ...loadConfig(), LOG_LEVEL: 'silent' as const };
      const { app, ctx } = await buildApp({ config, logger: false });
      try {
        const auth = ctx.apis.auth;
        if (!auth) throw new Error('auth module missing');
        return await keysCommand(auth, rest, print);
      } finally {
        await app.close();
      }
    }
    case 'help':
    case '--help':
      print(HELP);
      return 0;
    default:
      print(HELP);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof ConfigError ? error.message : describeCliError(error)}\n`);
    process.exitCode = 1;
  },
);
