#!/usr/bin/env -S node --min-semi-space-size=16
import { existsSync } from 'node:fs';
import nodeModule from 'node:module';
import { createServer } from 'node:net';
import { firstKeyBox, HELP, KEYS_USAGE, listenProblem, USERS_USAGE, WORKFLOWS_USAGE } from './cli/help.js';

// Node ≥ 22.1 caches compiled code on disk (no-op on 20): the server and each CLI command load hundreds
// of files. Before any import below, which are all dynamic for that reason and so that `help` loads nothing.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

const print = (line: string) => process.stdout.write(`${line}\n`);
const printErr = (line: string) => process.stderr.write(`${line}\n`);
/** `keys help`, `workflows --help`: answered before anything is loaded or opened. */
const asksHelp = (args: string[]) => args[0] === 'help' || args[0] === '--help';

/** An error already worded for a person: printed as is, no stack trace. */
class CliError extends Error {}

type ServerParts = typeof import('./server-parts.js');
let loadedServer: Promise<ServerParts> | null = null;

/**
 * What `serve` and `worker` run: from the build's bundle when it exists (dist/bundle/: on
 * Node 20, resolving, reading and compiling ~2,000 files one by one was most of a start), from the
 * files otherwise (a build without esbuild, or `tsx src/main.ts`).
 */
function serverParts(): Promise<ServerParts> {
  const bundle = new URL('./bundle/server.js', import.meta.url);
  loadedServer ??= existsSync(bundle) ? import(bundle.href) : import('./server-parts.js');
  return loadedServer;
}

/**
 * The expression sandbox's first worker, started before the app is built and not awaited: it boots (a
 * thread, QuickJS's WebAssembly, the guest scripts: about a second of CPU) on another core while this
 * one builds the app, so the first webhook after a start does not wait for it (issue 29). The sizes
 * are the workflows module's (it configures the same ones again at init, which keeps this pool).
 */
async function warmExpressionSandbox(
  parts: ServerParts,
  config: import('./config.js').Config,
): Promise<void> {
  if (!parts.enabledServices(config).has('workflow')) return;
  parts.configureExpressionSandbox({
    workers: config.EXPRESSION_WORKERS,
    memoryMb: config.EXPRESSION_MEMORY_MB,
    perTenant: config.EXPRESSION_WORKERS_PER_ACCOUNT,
  });
  parts.expressionSandbox().warm(1);
}

/** Why the server could not listen on host:port (a person's one line), or null when it can. */
function listenCheck(port: number, host: string): Promise<string | null> {
  if (port === 0) return Promise.resolve(null);
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error) => resolve(listenProblem(error, port, host)));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

async function serve(noWorker: boolean): Promise<void> {
  const parts = await serverParts();
  const { closeWithGrace, buildApp, handleProcessErrors } = parts;
  const config = parts.loadConfig();
  if (noWorker) config.WORKFLOW_WORKER = false;
  // A busy port is told now, not after the migrations, the modules and the first key.
  const busy = await listenCheck(config.PORT, config.HOST);
  if (busy) throw new CliError(busy);
  // Not awaited before the app: a failure here only means the first expression starts a worker itself.
  const warming = warmExpressionSandbox(parts, config).catch(() => undefined);
  const { app, ctx } = await buildApp({ config });
  await warming;
  const auth = ctx.apis.auth;
  if (!auth) throw new Error('auth module missing');
  const boot = await auth.bootstrap().catch(async (error: unknown) => {
    await app.close();
    throw error;
  });
  // Printed once, to the terminal and never to the JSON log.
  if (boot.createdKey || boot.setupUrl) print(firstKeyBox(boot.createdKey, boot.setupUrl));
  const shipped = await ctx.apis.workflows?.importShipped(boot.accountId);
  if (shipped && shipped.length > 0)
    app.log.info({ workflows: shipped }, 'shipped workflows imported (inactive)');
  // Uncaught errors are handled below: a dependency's fault (PostgreSQL restarting) must not end it.
  const grace = closeWithGrace(
    { delay: config.SHUTDOWN_GRACE_MS, skip: ['uncaughtException', 'unhandledRejection'] },
    async ({ signal }) => {
      app.log.info({ signal }, 'shutting down');
      await app.close();
    },
  );
  const unhandle = handleProcessErrors({
    log: app.log,
    shutdown: () => app.close(),
    graceMs: config.SHUTDOWN_GRACE_MS,
  });
  try {
    await app.listen({ port: config.PORT, host: config.HOST });
  } catch (error) {
    const problem = listenProblem(error, config.PORT, config.HOST);
    if (!problem) throw error;
    grace.uninstall();
    unhandle();
    await app.close();
    throw new CliError(problem);
  }
}

type Commands = typeof import('./cli/commands.js');
let loadedCommands: Promise<Commands> | null = null;

/**
 * `keys`, `users` and `migrate`: from the build's one-file bundle of them when it exists (a tenth of
 * the CPU of loading their ~1,000 dependency files one by one on Node 20), from their files otherwise.
 */
function commands(): Promise<Commands> {
  const bundle = new URL('./cli-commands.js', import.meta.url);
  loadedCommands ??= existsSync(bundle) ? import(bundle.href) : import('./cli/commands.js');
  return loadedCommands;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      await serve(rest.includes('--no-worker'));
      return -1;
    case 'worker': {
      const { closeWithGrace, buildApp, loadConfig, handleProcessErrors, serveWorkerMetrics } =
        await serverParts();
      const config = { ...loadConfig(), WORKFLOW_WORKER: true, PLATFORM_SERVICES: 'workflow' };
      if (!config.REDIS_URL) {
        print('platform worker needs REDIS_URL: without it, `serve` runs executions in-process.');
        return 2;
      }
      // The worker serves no HTTP: the app must not register /metrics on a port nobody listens on.
      const { app, ctx } = await buildApp({ config: { ...config, METRICS_ENABLED: false } });
      await app.ready();
      closeWithGrace(
        { delay: config.SHUTDOWN_GRACE_MS, skip: ['uncaughtException', 'unhandledRejection'] },
        async () => {
          await app.close();
        },
      );
      handleProcessErrors({ log: app.log, shutdown: () => app.close(), graceMs: config.SHUTDOWN_GRACE_MS });
      if (config.METRICS_ENABLED) {
        await serveWorkerMetrics(ctx);
      }
      app.log.info('workflow worker started');
      return -1;
    }
    case 'workflows': {
      if (asksHelp(rest)) {
        print(WORKFLOWS_USAGE);
        return 0;
      }
      const [{ workflowsCommand }, { withPlatform }, { authModule }, { workflowsModule }] = await Promise.all(
        [
          import('./cli/workflows.js'),
          import('./cli/platform.js'),
          import('./modules/auth/index.js'),
          import('./modules/workflows/index.js'),
        ],
      );
      return withPlatform([authModule, workflowsModule], async (ctx) => {
        const auth = ctx.apis.auth;
        const workflows = ctx.apis.workflows;
        if (!auth || !workflows) throw new Error('modules missing');
        const { accountId, createdKey } = await auth.bootstrap();
        // On stderr: stdout stays the command's own output (JSON for export).
        if (createdKey) printErr(firstKeyBox(createdKey));
        return workflowsCommand(workflows, accountId, rest, print);
      });
    }
    case 'migrate':
      return (await commands()).runMigrate(print);
    case 'keys':
      if (asksHelp(rest)) {
        print(KEYS_USAGE);
        return 0;
      }
      return (await commands()).runKeys(rest, print, printErr);
    case 'users':
      if (asksHelp(rest)) {
        print(USERS_USAGE);
        return 0;
      }
      return (await commands()).runUsers(rest, print, printErr);
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

/** The copy that threw: the bundle's error classes are not the unbundled files' ones. */
async function errorClasses(): Promise<Pick<Commands, 'ConfigError' | 'describeCliError'>> {
  if (loadedCommands) return loadedCommands;
  const [{ ConfigError }, { describeCliError }] = await Promise.all([
    import('./config.js'),
    import('./cli/keys.js'),
  ]);
  return { ConfigError, describeCliError };
}

async function describe(error: unknown): Promise<string> {
  if (error instanceof CliError) return error.message;
  const { ConfigError, describeCliError } = await errorClasses();
  return error instanceof ConfigError ? error.message : describeCliError(error);
}

// `platform keys list | head`: the reader leaving early ends the output, it is not a crash with a stack
// trace. The server's own logs are left to their logger.
const command = process.argv[2];
if (command !== 'serve' && command !== 'worker') {
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    });
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
