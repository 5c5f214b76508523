import { configDefaults, defineConfig } from 'vitest/config';
import { SERIAL, TIMING } from './scripts/test-plan.mjs';

/**
 * Test files run in four projects; which file goes where is scripts/test-plan.mjs, and `npm test`
 * (scripts/test.mjs) runs them in phases (docs/decisions.md, "CI in phases", "One module graph for
 * the suites under test/"):
 *
 * - `parallel`: the suites under test/, TEST_FORKS (default 1) forks, sharing each fork's module graph
 *   (`isolate: false`). Each file builds what it uses: SQLite in memory, a PostgreSQL schema of its
 *   own (test/helpers/platform.ts drops it on close), Redis keys under a prefix of its own
 *   (uniqueName), loopback servers on port 0.
 * - `unit`: the tests beside the code under src/, each file with fresh modules (in a worker that is
 *   not restarted between files: Vitest recycles workers on the root's `isolate`, which is off).
 * - `serial`: files that start platform processes or private PostgreSQL/Redis servers and kill them,
 *   build this repository's `dist/`, or drive Chromium; `timing`: files that bound event-loop delays
 *   and latencies. Both are `singleFork` (Vitest 3 has one fork pool per run, sized by the root's
 *   `maxForks`): one file after another in one fork, each with fresh modules (`isolate`). A plain
 *   `vitest run` runs them after the others; `npm test` runs `serial` in two streams and `timing` alone.
 *
 * A file that starts to share a server, a port, a fixed Redis key or the repository's files with
 * others belongs in SERIAL; one that sets process-wide state (environment, timers, globals) and does
 * not put it back must restore it in afterAll, since the next file of its fork sees it.
 */

// One at a time by default: measured on CI's 2 cores, two forks took longer (1,214 s against 843 s for
// the Node 20 pass) and PostgreSQL set-ups timed out under the contention (docs/decisions.md).
const forks = Math.max(1, Number(process.env.TEST_FORKS ?? 1) || 1);

// Files a run leaves out (`npm test` sets it for the Node 24 pass: NODE24_EXCLUDE). Vitest's own
// `--exclude` does not reach a project that sets its `exclude`, so it is added to each here.
const left = (process.env.TEST_EXCLUDE ?? '').split(',').filter(Boolean);

export default defineConfig({
  test: {
    // Generous: tests wait for conditions (test/helpers/until.ts), and on a machine at a load of
    // 16-28 building a platform on PostgreSQL alone has taken over 30 s.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Drops the PostgreSQL schemas test platforms kept for reuse (test/helpers/databases.ts).
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    // Workers are not recycled between files (Vitest decides that on the root's `isolate`); whether a
    // file starts from fresh modules inside its worker is each project's `isolate` below.
    poolOptions: { forks: { maxForks: forks, minForks: 1, isolate: false } },
    projects: [
      {
        // The suites under test/ share one fork's module graph (`isolate: false`): each still builds
        // its own platform, database and servers, but the platform's modules are imported once per
        // fork instead of once per file. Importing was most of a file's time: 8 workflow files took
        // 356 s isolated and 90 s shared on the same loaded machine (docs/decisions.md).
        extends: true,
        test: {
          name: 'parallel',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...SERIAL, ...TIMING, ...left],
          poolOptions: { forks: { isolate: false } },
        },
      },
      {
        // Unit tests beside the code: cheap to import, and some hold module-level state on purpose
        // (pools, caches) that a shared module graph would carry from one file to the next.
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...SERIAL, ...TIMING, ...left],
          poolOptions: { forks: { isolate: true } },
        },
      },
      {
        extends: true,
        test: {
          name: 'serial',
          include: SERIAL,
          exclude: [...configDefaults.exclude, ...TIMING, ...left],
          poolOptions: { forks: { singleFork: true, isolate: true } },
        },
      },
      {
        extends: true,
        test: {
          name: 'timing',
          include: TIMING,
          exclude: [...configDefaults.exclude, ...left],
          poolOptions: { forks: { singleFork: true, isolate: true } },
        },
      },
    ],
  },
});
