#!/usr/bin/env -S node --min-semi-space-size=16
import nodeModule from 'node:module';
import { firstKeyBox, HELP, listenProblem } from './cli/help.js';
import type { Config } from './config.js';

// Node ≥ 22.1 caches compiled code on disk (no-op on 20): the server and each CLI command load hundreds
// of files. Before any import below, which are all dynamic for that reason and so that `help` loads nothing.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

const print = (line: string) => process.stdout.write(`${line}\n`);
const printErr = (line: string) => process.stderr.write(`${line}\n`);

/** An error already worded for a person: printed as is, no stack trace. */
class CliError extends Error {}

async function serve(noWorker: boolean): Promise<void> {
  const [{ default: closeWithGrace }, { buildApp }, { loadConfig }] = await Promise.all([
    import('close-with-grace'),
    import('./app.js'),
    import('./config.js'),
  ]);
  const config = loadConfig();
  if (noWorker) config.WORKFLOW_WORKER = false;
  const { app, ctx } = await buildApp({ config });
  const auth = ctx.apis.auth;
  if (!auth) throw new Error('auth module missing');
  const boot = await auth.bootstrap().catch(async (error: unknown) => {
    await app.close();
    throw error;
  });
  // Printed once, to the terminal and never to the JSON log.
  if (boot.createdKey) print(firstKeyBox(boot.createdKey));
  const shipped = await ctx.apis.workflows?.importShipped(boot.accountId);
  if (shipped && shipped.length > 0)
    app.log.info({ workflows: shipped }, 'shipped workflows imported (inactive)');
  const grace = closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS }, async ({ err, signal }) => {
    if (err) app.log.error({ err }, 'shutting down after error');
    else app.log.info({ signal }, 'shutting down');
    await app.close();
  });
  try {
    await app.listen({ port: config.PORT, host: config.HOST });
  } catch (error) {
    const problem = listenProblem(error, config.PORT, config.HOST);
    if (!problem) throw error;
    grace.uninstall();
    await app.close();
    throw new CliError(problem);
  }
}

/**
 * The platform for a command: every module's services on the server's database, none of its routes
 * (compiling their schemas is most of a start, and a command serves nothing). Never a worker: recovery
 * here would mark the server's running executions as crashed.
 */
async function withPlatform<T>(use: (platform: import('./app.js').Platform) => Promise<T>): Promise<T> {
  const [{ buildApp }, { loadConfig }, { allModules }] = await Promise.all([
    import('./app.js'),
    import('./config.js'),
    import('./modules/index.js'),
  ]);
  const config: Config = { ...loadConfig(), LOG_LEVEL: 'silent', WORKFLOW_WORKER: false };
  const modules = allModules.map(({ routes: _routes, ...module }) => module);
  const platform = await buildApp({ config, logger: false, modules });
  try {
    return await use(platform);
  } finally {
    await platform.app.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      await serve(rest.includes('--no-worker'));
      return -1;
    case 'worker': {
      const [{ default: closeWithGrace }, { buildApp }, { loadConfig }] = await Promise.all([
        import('close-with-grace'),
        import('./app.js'),
        import('./config.js'),
      ]);
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
      const { workflowsCommand } = await import('./cli/workflows.js');
      return withPlatform(async ({ ctx }) => {
        const auth = ctx.apis.auth;
        const workflows = ctx.apis.workflows;
        if (!auth || !workflows) throw new Error('modules missing');
        const { accountId, createdKey } = await auth.bootstrap();
        // On stderr: stdout stays the command's own output (JSON for export).
        if (createdKey) printErr(firstKeyBox(createdKey));
        return workflowsCommand(workflows, accountId, rest, print);
      });
    }
    case 'migrate': {
      const [{ loadConfig }, { openDatabase }, { migrateToLatest }, { allMigrations, allModules }] =
        await Promise.all([
          import('./config.js'),
          import('./core/db/database.js'),
          import('./core/db/migrate.js'),
          import('./modules/index.js'),
        ]);
      const config = loadConfig();
      const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
      try {
        const results = await migrateToLatest(database.db, allMigrations(allModules));
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
    case 'keys': {
      const { keysCommand } = await import('./cli/keys.js');
      return withPlatform(async ({ ctx }) => {
        const auth = ctx.apis.auth;
        if (!auth) throw new Error('auth module missing');
        return keysCommand(auth, rest, print, printErr);
      });
    }
    case 'backup':
      return (await import('./cli/backup.js')).backupCommand(rest);
    case 'restore':
      return (await import('./cli/backup.js')).restoreCommand(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      print(HELP);
      return 0;
    default:
      printErr(`Unknown command '${command}'.\n`);
      printErr(HELP);
      return 2;
  }
}

async function describe(error: unknown): Promise<string> {
  if (error instanceof CliError) return error.message;
  const [{ ConfigError }, { describeCliError }] = await Promise.all([
    import('./config.js'),
    import('./cli/keys.js'),
  ]);
  return error instanceof ConfigError ? error.message : describeCliError(error);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  async (error: unknown) => {
    printErr(await describe(error));
    process.exitCode = 1;
  },
);
