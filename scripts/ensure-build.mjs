#!/usr/bin/env node
// Compiles src/ into dist/ only when dist/ is older than the sources: `npm start` and `npm run platform`
// call this first, so a current build starts at once instead of paying tsc's ~5 s (TypeScript 7; ~20 s on 5.9) every time.
// The check stats every file and folder under src/ (a folder's mtime changes when a file is added,
// removed or renamed in it) and compares the newest against dist/.build-stamp: a few milliseconds.
// The portal (web/portal) is bundled the same way, against dist/portal/.build-stamp (build-portal.mjs).
// After tsc, the light CLI commands (dist/cli/commands.js: keys, users, migrate) are bundled with their
// dependencies into dist/cli-commands.js (esbuild), which main.js loads instead when it exists: one file
// parses in a tenth of the CPU of ~1,000. The server's own layout under dist/ is unchanged (worker
// threads and guest scripts are read by path). No esbuild, or a failed bundle: no bundle, and main.js
// loads the unbundled files.
//
//   node scripts/ensure-build.mjs            build if stale; a failed build exits 1
//   node scripts/ensure-build.mjs --install  the `prepare` step of `npm install`: a failed build warns
//                                            and exits 0, so a type error does not break the install
//                                            (`npm test` reports it; `npm start` retries the build)
//   node scripts/ensure-build.mjs --check    exit 0 when current, 1 when stale; never builds
//   node scripts/ensure-build.mjs --force    build whatever the stamp says (`npm run build`)
import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tscPath } from './tsc-path.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const stamp = path.join(dist, '.build-stamp');
const lock = path.join(dist, '.build-lock');
/** The portal's sources and output (scripts/build-portal.mjs, loaded only when the sources exist). */
const portalSource = path.join(root, 'web', 'portal');
const portalOut = path.join(dist, 'portal');
/** Besides src/: what changes the compiler's output. */
const INPUTS = ['tsconfig.json', 'tsconfig.build.json'];
/** A lock older than this was left by a build that died: take it over. */
const STALE_LOCK_MS = 5 * 60_000;

const mode = process.argv[2] ?? '';
const say = (line) => process.stderr.write(`${line}\n`);

function newestMtime(dir) {
  let newest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/** Why dist/ is stale, or null when it is current. */
function staleness() {
  if (!existsSync(path.join(dist, 'main.js'))) return 'no build yet';
  if (!existsSync(stamp)) return 'the build has no stamp';
  const built = statSync(stamp).mtimeMs;
  const inputs = Math.max(
    newestMtime(path.join(root, 'src')),
    ...INPUTS.map((f) => statSync(path.join(root, f)).mtimeMs),
  );
  return inputs > built ? 'src/ changed since the last build' : null;
}

/** Why dist/portal/ is stale, or null when it is current (or there is no portal source). */
function portalStaleness() {
  if (!existsSync(portalSource)) return null;
  const portalStamp = path.join(portalOut, '.build-stamp');
  if (!existsSync(path.join(portalOut, 'index.html')) || !existsSync(portalStamp))
    return 'no portal build yet';
  const inputs = Math.max(
    newestMtime(portalSource),
    statSync(path.join(root, 'scripts', 'build-portal.mjs')).mtimeMs,
  );
  return inputs > statSync(portalStamp).mtimeMs ? 'web/portal changed since the last build' : null;
}

/** true when dist/portal/ is current afterwards. */
async function bundlePortal(reason) {
  say(`${reason}: bundling the portal (esbuild)…`);
  const startedAt = Date.now();
  try {
    // Imported here: esbuild loads only when there is a portal to build.
    const { buildPortal } = await import('./build-portal.mjs');
    await buildPortal({ outDir: portalOut });
  } catch (error) {
    say(`the portal build failed: ${error instanceof Error ? error.message : String(error)}`);
    return false;
  }
  say(`portal built in ${((Date.now() - startedAt) / 1000).toFixed(1)} s.`);
  return true;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One build at a time: processes started together (tests, a server and a CLI) wait for the first. */
async function withLock(fn) {
  mkdirSync(dist, { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      else await sleep(200);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

const commandsEntry = path.join(dist, 'cli', 'commands.js');
const commandsBundle = path.join(dist, 'cli-commands.js');

/** Bundles the light CLI commands; a failure only leaves them unbundled. */
async function bundleCommands() {
  if (!existsSync(commandsEntry)) return;
  try {
    const { build: esbuild } = await import('esbuild');
    const partial = `${commandsBundle}.partial`;
    await esbuild({
      entryPoints: [commandsEntry],
      outfile: partial,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'silent',
      // Loaded on demand and only on some machines (a native driver, PostgreSQL, Redis): left as imports.
      external: ['better-sqlite3', 'pg', 'ioredis'],
      // CommonJS dependencies inside an ES module bundle call `require`.
      banner: {
        js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      },
    });
    renameSync(partial, commandsBundle);
  } catch (error) {
    say(`the CLI bundle was skipped: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const serverEntry = path.join(dist, 'server-parts.js');
const serverBundle = path.join(dist, 'bundle');

/**
 * Packages bundled into dist/server.js with the platform's own files: those a start loads (typebox
 * alone is ~700 files, kysely ~260), read with strace on `serve`. The rest stay imports of
 * node_modules: native drivers, what is loaded only when configured (PostgreSQL, Redis, BullMQ), heavy
 * libraries loaded on first use, and packages that read their own files by path (swagger-ui's and
 * @fastify/static's assets, pino's transport worker, QuickJS's WebAssembly).
 */
const BUNDLED_PACKAGES = new Set(
  `@fastify/accept-negotiator @fastify/ajv-compiler @fastify/busboy @fastify/deepmerge @fastify/error
  @fastify/fast-json-stringify-compiler @fastify/forwarded @fastify/merge-json-schemas @fastify/multipart
  @fastify/proxy-addr @fastify/send @fastify/swagger @fastify/websocket @lukeed/ms @opentelemetry/api
  @orama/stemmers @pinojs/redact ajv ajv-formats atomic-sleep avvio aws4 bintrees close-with-grace
  content-disposition cron-parser csv-parse csv-stringify depd dequal duplexify end-of-stream escape-html
  fast-decode-uri-component fast-deep-equal fast-json-stringify fast-querystring fast-uri fastify
  fastify-plugin fastq fflate find-my-way http-errors inherits ipaddr.js jmespath jose
  json-schema-ref-resolver json-schema-resolver json-schema-traverse jsonata kysely layerr lru-cache luxon
  mime ms on-exit-leak-free once pino pino-std-serializers process-warning prom-client
  quick-format-unescaped re2js readable-stream ret reusify rfdc safe-regex2 safe-stable-stringify
  secure-json-parse semver setprototypeof sonic-boom statuses stream-shift tdigest toad-cache toidentifier
  typebox ulidx util-deprecate wrappy ws yaml`.split(/\s+/),
);

const packageOf = (specifier) =>
  specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];

/**
 * The platform's files read `import.meta.url` to find what sits beside them (worker scripts, the
 * portal's assets, package.json): in the bundle each keeps the URL of the file it came from, relative
 * to the bundle's folder (every chunk is written there), so a moved install still finds them.
 */
const ownFileUrls = {
  name: 'own-file-urls',
  setup(b) {
    b.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(dist + path.sep)) return undefined;
      const { readFile } = await import('node:fs/promises');
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return { contents: text, loader: 'js' };
      const rel = path.relative(serverBundle, args.path).split(path.sep).join('/');
      return {
        contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`),
        loader: 'js',
      };
    });
  },
};

/**
 * Bundles what `serve` and `worker` load into dist/bundle/ (server.js and the chunks it imports); a
 * failure only leaves them unbundled. Split, not one file: what the platform imports on first use
 * (a spreadsheet node, the MCP server) stays a chunk loaded then, with the packages it needs, instead
 * of being compiled, and its packages loaded, at every start.
 */
async function bundleServer() {
  if (!existsSync(serverEntry)) return;
  try {
    const { build: esbuild } = await import('esbuild');
    const partial = `${serverBundle}.partial`;
    rmSync(partial, { recursive: true, force: true });
    const topLevel = path.join(root, 'node_modules') + path.sep;
    const keepExternal = {
      name: 'keep-external',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, async (args) => {
          if (args.pluginData?.inner) return undefined;
          if (args.path.startsWith('node:')) return { path: args.path, external: true };
          if (BUNDLED_PACKAGES.has(packageOf(args.path))) return undefined;
          // Left to Node only where Node, resolving from dist/, finds the same copy: a package's own
          // nested version of a dependency is bundled with it instead.
          const found = await b.resolve(args.path, {
            kind: args.kind,
            resolveDir: args.resolveDir,
            pluginData: { inner: true },
          });
          const nested =
            found.path.startsWith(topLevel) && found.path.slice(topLevel.length).includes('node_modules');
          return nested && !found.errors.length ? undefined : { path: args.path, external: true };
        });
      },
    };
    await esbuild({
      entryPoints: { server: serverEntry },
      outdir: partial,
      bundle: true,
      splitting: true,
      chunkNames: 'chunk-[hash]',
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'silent',
      plugins: [keepExternal, ownFileUrls],
      // CommonJS packages inside ES module chunks call `require`.
      banner: {
        js: "import { createRequire as __platformRequire } from 'node:module'; const require = __platformRequire(import.meta.url);",
      },
    });
    renameSync(partial, serverBundle);
  } catch (error) {
    say(`the server bundle was skipped: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** true when dist/ is current afterwards. */
async function build(reason) {
  const tsc = tscPath(root);
  if (!tsc) {
    say(`${reason}, and TypeScript is not installed (npm install without dev dependencies?): cannot build.`);
    return false;
  }
  say(
    `${reason}: compiling the TypeScript sources into dist/ with tsc (about 5 s on an idle 2-core machine; ` +
      'minutes while npm is still building native modules or the machine is busy)…',
  );
  // The stamp takes the time the build started: a file saved during the build makes the next start rebuild.
  const startedAt = new Date();
  // Never a bundle older than the files it was made from.
  rmSync(commandsBundle, { force: true });
  rmSync(serverBundle, { recursive: true, force: true });
  // A line every 30 s, so a long compile is never minutes of silence.
  const heartbeat = setInterval(
    () => say(`  still compiling (${Math.round((Date.now() - startedAt.getTime()) / 1000)} s)…`),
    30_000,
  );
  const status = await new Promise((resolve) => {
    const child = spawn(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
      cwd: root,
      stdio: 'inherit',
    });
    child.once('error', () => resolve(1));
    child.once('exit', (code) => resolve(code ?? 1));
  }).finally(() => clearInterval(heartbeat));
  if (status !== 0) {
    say('the build failed (errors above).');
    return false;
  }
  await bundleCommands();
  await bundleServer();
  closeSync(openSync(stamp, 'w'));
  utimesSync(stamp, startedAt, startedAt);
  say(`built in ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)} s.`);
  return true;
}

const reason = mode === '--force' ? 'build asked for' : staleness();
const portalReason = mode === '--force' && existsSync(portalSource) ? 'build asked for' : portalStaleness();
if (mode === '--check') process.exit(reason || portalReason ? 1 : 0);
if (reason || portalReason) {
  // Another process may have built while this one waited for the lock: check again inside it.
  const ok = await withLock(async () => {
    const still = mode === '--force' ? reason : staleness();
    const portalStill = mode === '--force' ? portalReason : portalStaleness();
    const built = still ? await build(still) : true;
    const portalBuilt = portalStill ? await bundlePortal(portalStill) : true;
    return built && portalBuilt;
  });
  if (!ok && mode === '--install') say('npm install goes on; `npm start` will try the build again.');
  else if (!ok) process.exit(1);
}
