/**
 * Which test files run how (docs/decisions.md, "CI in phases"). Read by vitest.config.ts (its
 * projects) and scripts/test.mjs (the phases of `npm test`).
 *
 * - `parallel` (test/**) and `unit` (src/**): everything not listed below.
 * - `serial`: files that start platform processes or private PostgreSQL/Redis servers and kill them,
 *   build this repository's `dist/`, or drive Chromium. Each runs alone in its process with fresh
 *   modules; `npm test` runs them in two streams at once, since most of their time is spent waiting
 *   for processes, and their time bounds (seconds) hold beside one other busy process.
 * - `timing`: files that bound event-loop delays or latencies in hundreds of milliseconds. `npm test`
 *   runs them last, with nothing else running.
 */
export const TIMING = [
  'test/isolation/event-loop-cpu.test.ts',
  'test/isolation/event-loop-regex.test.ts',
  'test/isolation/fairness.test.ts',
  'test/isolation/sandbox-runaway.test.ts',
  'test/core/edge-timeouts.test.ts',
  'test/scale/**/*.test.ts',
  'src/core/http/json-sliced.test.ts',
];

export const SERIAL = [
  'test/faults/**/*.test.ts',
  'test/workflows/process/**/*.test.ts',
  'test/isolation/**/*.test.ts',
  'test/portal-web/**/*.test.ts',
  'test/cli/**/*.test.ts',
  'test/core/cli-and-process.test.ts',
  'test/core/optional-backends.test.ts',
  'test/core/metrics-worker.test.ts',
  'test/core/fair-queue.test.ts',
  'test/core/dependency-faults.test.ts',
];

/**
 * Seconds each slow serial file took in the last measured CI run (Node 20, idle 2-core machine), to
 * split them into two streams of about equal length. A file not listed counts as 5 s.
 */
export const SERIAL_SECONDS = {
  'test/cli/commands.test.ts': 69,
  'test/faults/redis-outage.test.ts': 68,
  'test/faults/postgres-restart.test.ts': 56,
  'test/portal-web/browser.test.ts': 30,
  'test/portal-web/browser-workspace.test.ts': 20,
  'test/faults/worker-kill.test.ts': 25,
  'test/faults/redis-long-outage.test.ts': 25,
  'test/workflows/process/schedule-restart.test.ts': 20,
  'test/workflows/process/cli.test.ts': 20,
  'test/core/cli-and-process.test.ts': 20,
  'test/faults/redis-rate-limit.test.ts': 15,
  'test/workflows/process/bullmq.test.ts': 11,
  'test/workflows/process/crash-recovery.test.ts': 10,
  'test/workflows/process/checkpoint-restart.test.ts': 10,
  'test/isolation/sandbox-audit.test.ts': 11,
  'test/faults/disk-full.test.ts': 9,
  'test/core/metrics-worker.test.ts': 7,
  'test/cli/server-bundle.test.ts': 20,
  'test/cli/getting-started.test.ts': 6,
  'test/isolation/secrets.test.ts': 6,
  'test/portal-web/static.test.ts': 6,
  'test/cli/ensure-build.test.ts': 5,
};

/**
 * Serial streams per runtime. Streams are queued with the other jobs, two running at a time, so more
 * and shorter streams pack the two slots more evenly; each costs a Vitest start (a few seconds).
 */
export const SERIAL_STREAMS = 3;

/**
 * The order jobs start in, two at a time (a job's name is its runtime, then its project). The two
 * `parallel` projects are CPU-bound on the same PostgreSQL and SQLite, so they do not start together:
 * Node 20's streams run beside Node 20's shared-graph suites, Node 24's beside the rest.
 */
export const JOB_ORDER = [
  'node20-parallel',
  'node20-serial-*',
  'node24-parallel',
  'lint-typecheck',
  'node24-serial-*',
  'node20-unit',
  'node24-unit',
];

/**
 * Files the Node 24 pass leaves out: the PostgreSQL and Redis fault suites (.ci/run says why), the
 * attack audits kept as tests, which probe the platform's own rules (who may reach what, what is
 * refused, what is stored) through many routes and no runtime-specific part, the Python pool's
 * scheduling rules, and the portal's browser walks (Chromium drives pages the Node 24 pass serves in
 * test/portal-web/static.test.ts and the portal's API suites); the functional suites cover the
 * runtime (docs/decisions.md, "The audits run once", "CI time on a slower machine").
 */
export const NODE24_EXCLUDE = [
  'test/faults/postgres-*',
  'test/faults/redis-*',
  'test/faults/worker-*',
  'test/cross-tenant-routes.test.ts',
  'test/*-audit.test.ts',
  'test/llm/adversarial.test.ts',
  'test/workflows/sandbox-tenancy.test.ts',
  'src/core/sandbox/python-pool-scheduling.test.ts',
  'test/portal-web/browser*.test.ts',
];
