import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Test files run in two projects (docs/decisions.md, "Test files in parallel where they share no
 * server"):
 *
 * - `parallel`: most files, TEST_FORKS (default 1) at a time, each in a fork of its own. Each builds
 *   what it uses: SQLite in memory, a PostgreSQL schema of its own (test/helpers/platform.ts drops it
 *   on close), Redis keys under a prefix of its own (uniqueName), loopback servers on port 0.
 * - `serial`: files that share something beyond that or measure time, one at a time, after the
 *   parallel ones: they start platform processes or private PostgreSQL/Redis servers and kill them
 *   (test/faults, test/scale, test/workflows/process), build this repository's `dist/` (test/cli,
 *   test/portal-web), drive Chromium, or bound event-loop delays and latencies that a second busy
 *   fork on a 2-core machine would stretch (test/isolation, json-sliced). Vitest 3 has one fork pool
 *   per run (its size is the root's `maxForks`), so "one at a time" is `singleFork`: these files run
 *   one after another in one fork, each with fresh modules (`isolate`).
 *
 * A file that starts to share a server, a port, a fixed Redis key or the repository's files with
 * others belongs in SERIAL.
 */
const SERIAL = [
  'test/faults/**/*.test.ts',
  'test/scale/**/*.test.ts',
  'test/workflows/process/**/*.test.ts',
  'test/isolation/**/*.test.ts',
  'test/portal-web/**/*.test.ts',
  'test/cli/**/*.test.ts',
  'test/core/cli-and-process.test.ts',
  'test/core/optional-backends.test.ts',
  'test/core/metrics-worker.test.ts',
  'test/core/fair-queue.test.ts',
  'test/core/dependency-faults.test.ts',
  'test/core/edge-timeouts.test.ts',
  'src/core/http/json-sliced.test.ts',
];

// One at a time by default: measured on CI's 2 cores, two forks took longer (1,214 s against 843 s for
// the Node 20 pass) and PostgreSQL set-ups timed out under the contention (docs/decisions.md).
const forks = Math.max(1, Number(process.env.TEST_FORKS ?? 1) || 1);

export default defineConfig({
  test: {
    // Generous: tests wait for conditions (test/helpers/until.ts), and on a machine at a load of
    // 16-28 building a platform on PostgreSQL alone has taken over 30 s.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: forks, minForks: 1 } },
    reporters: process.env.CI
      ? ['default', ['json', { outputFile: 'coverage/test-results.json' }]]
      : ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...SERIAL],
        },
      },
      {
        extends: true,
        test: {
          name: 'serial',
          include: SERIAL,
          poolOptions: { forks: { singleFork: true } },
        },
      },
    ],
  },
});
