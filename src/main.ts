#!/usr/bin/env -S node --min-semi-space-size=16
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { describeCliError, keysCommand } from './cli/keys.js';
import { workflowsCommand } from './cli/workflows.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './core/db/database.js';
import { migrateToLatest } from './core/db/migrate.js';
import { allMigrations, allModules } from './modules/index.js';

const print = (line: string) => process.stdout.write(`${line}\n`);

const HELP = `platform <command>
  serve [--no-worker]   start the HTTP server (default); --no-worker: API only, no workflow executions
  worker                run queued workflow executions only (needs REDIS_URL to share a queue)
  migrate               run database migrations
  workflows …           import FILE|DIR | export ID|--all
  keys …                create | list | revoke | rotate API keys (see 'keys help')`;

async function serve(noWorker: boolean): Promise<void> {
  const config = loadConfig();
  if (noWorker) config.WORKFLOW_WORKER = false;
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
  const shipped = await ctx.apis.workflows?.importShipped(boot.accountId);
  if (shipped && shipped.length > 0)
    app.log.info({ workflows: shipped }, 'shipped workflows imported (inactive)');
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
      await serve(rest.includes('--no-worker'));
      return -1;
    case 'worker': {
      const config = { ...loadConfig(), WORKFLOW_WORKER: true, PLATFORM_SERVICES: 'workflow' };
      if (!config.REDIS_URL) {
        print('platform worker needs REDIS_URL: without it, `serve` runs executions in-process.');
        return 2;
      }
      const { app } = await buildApp({ config });
      await app.ready();
      app.log.info('workflow worker started');
      closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS }, async () => {
        await app.close();
      });
      return -1;
    }
    case 'workflows': {
      const config = { ...loadConfig(), LOG_LEVEL: 'silent' as const, WORKFLOW_WORKER: false };
      const { app, ctx } = await buildApp({ config, logger: false });
      try {
        const auth = ctx.apis.auth;
        const workflows = ctx.apis.workflows;
        if (!auth || !workflows) throw new Error('modules missing');
        const { accountId, createdKey } = await auth.bootstrap();
        if (createdKey)
          print(`First start: owner account created. Admin API key (shown only now): ${createdKey}`);
        return await workflowsCommand(workflows, accountId, rest, print);
      } finally {
        await app.close();
      }
    }
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
      // Never a worker: recovery here would mark the server's running executions as crashed.
      const config = { ...loadConfig(), LOG_LEVEL: 'silent' as const, WORKFLOW_WORKER: false };
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
