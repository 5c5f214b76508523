import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { KEYS_USAGE, WORKFLOWS_USAGE } from '../../src/cli/help.js';
import { platformMigrations } from '../../src/cli/migrations.js';
import { withPlatform } from '../../src/cli/platform.js';
import { parseConfig } from '../../src/config.js';
import { authModule } from '../../src/modules/auth/index.js';
import { generateKey } from '../../src/modules/auth/key-format.js';
import { allMigrations, allModules } from '../../src/modules/index.js';

const run = promisify(execFile);
const MAIN = path.resolve('src/main.ts');
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'platform-cli-platform-'));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the migrations a command runs', () => {
  it("are every module's, under the modules' names (each module's migrations/index.ts)", () => {
    const modules = allMigrations(allModules);
    expect(Object.keys(platformMigrations).sort()).toEqual(Object.keys(modules).sort());
    for (const [name, migration] of Object.entries(modules))
      expect(platformMigrations[name], name).toBe(migration);
  });
});

describe('withPlatform', () => {
  it("migrates a fresh database like the server, gives the listed modules' APIs only, closes it all", async () => {
    const config = parseConfig({ DATA_DIR: tempDir(), DATABASE_URL: '', REDIS_URL: '' });
    const seen = await withPlatform(
      [authModule],
      async (ctx) => {
        const boot = await ctx.apis.auth?.bootstrap();
        const keys = boot ? await ctx.apis.auth?.keys.list(boot.accountId, { limit: 10 }) : undefined;
        const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(ctx.db);
        return {
          ctx,
          apis: Object.keys(ctx.apis),
          keys: keys?.data.length,
          migrations: rows.map((r) => r.name),
        };
      },
      config,
    );
    expect(seen.migrations.sort()).toEqual(Object.keys(allMigrations(allModules)).sort());
    expect(seen.apis).toEqual(['auth']);
    expect(seen.keys).toBe(1);
    // Never the server's worker, whatever the settings say.
    expect(seen.ctx.config.WORKFLOW_WORKER).toBe(false);
    await expect(sql`select 1`.execute(seen.ctx.db)).rejects.toThrow();
  });

  it('closes the database when a module or the command fails', async () => {
    const config = parseConfig({ DATA_DIR: tempDir(), DATABASE_URL: '', REDIS_URL: '' });
    let db: import('../../src/core/db/database.js').Db | undefined;
    await expect(
      withPlatform(
        [authModule],
        async (ctx) => {
          db = ctx.db;
          throw new Error('refused');
        },
        config,
      ),
    ).rejects.toThrow('refused');
    expect(db).toBeDefined();
    if (db) await expect(sql`select 1`.execute(db)).rejects.toThrow();
  });
});

describe('platform keys list', () => {
  it("loads neither Fastify, nor the app, nor other modules' code: only what the command uses", async () => {
    const dir = tempDir();
    // Every file the ESM loader loads, in order (a CommonJS package shows as its entry file).
    const loaded = path.join(dir, 'loaded.txt');
    const hooks = path.join(dir, 'hooks.mjs');
    writeFileSync(
      hooks,
      `import { appendFileSync } from 'node:fs';
let out;
export function initialize(data) { out = data.out; }
export async function load(url, context, next) { appendFileSync(out, url + '\\n'); return next(url, context); }
`,
    );
    const register = path.join(dir, 'register.mjs');
    writeFileSync(
      register,
      `import { register } from 'node:module';
register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { out: ${JSON.stringify(loaded)} } });
`,
    );
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', '--import', pathToFileURL(register).href, MAIN, 'keys', 'list'],
      {
        env: {
          ...process.env,
          DATA_DIR: path.join(dir, 'data'),
          DATABASE_URL: '',
          REDIS_URL: '',
          LOG_LEVEL: 'silent',
          PLATFORM_BOOTSTRAP_KEY: generateKey('production'),
        },
      },
    );
    // The bootstrap key, listed: the command did its work.
    expect(stdout).toMatch(/^\S+ {2}bootstrap {2}production {2}Admin {2}/);
    const files = readFileSync(loaded, 'utf8').trim().split('\n');
    expect(files.some((f) => /\/src\/modules\/auth\/key-service\.ts$/.test(f))).toBe(true);
    const unwanted = files.filter(
      (f) =>
        /\/node_modules\/(fastify|@fastify\/[^/]+|ajv|prom-client)\//.test(f) ||
        /\/src\/(app|modules\/index)\.ts$/.test(f) ||
        // The settings read the models file (src/config.ts): the one other module file a command needs.
        /\/src\/modules\/(?!auth\/|llm\/model-file\.ts$)[^/]+\/(?!migrations\/)/.test(f),
    );
    expect(unwanted).toEqual([]);
  }, 60_000);
});

describe('keys help, workflows --help', () => {
  it('print the usage, exit 0, and open no database (the data directory is not even made)', async () => {
    const dataDir = path.join(tempDir(), 'never-made');
    const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '' };
    const [keys, workflows] = await Promise.all([
      run(process.execPath, ['--import', 'tsx', MAIN, 'keys', 'help'], { env }),
      run(process.execPath, ['--import', 'tsx', MAIN, 'workflows', '--help'], { env }),
    ]);
    expect(keys).toEqual({ stdout: `${KEYS_USAGE}\n`, stderr: '' });
    expect(workflows).toEqual({ stdout: `${WORKFLOWS_USAGE}\n`, stderr: '' });
    expect(existsSync(dataDir)).toBe(false);
  }, 60_000);
});
