#!/usr/bin/env node
/**
 * `npm test`: lint, typecheck and every suite, in two phases that keep both cores of a CI machine busy
 * without ever running two latency-bound files together (docs/decisions.md, "CI in phases"):
 *
 *   1. one queue, two jobs at a time, in JOB_ORDER: lint + typecheck, the `parallel` and `unit`
 *      projects, and the `serial` files in SERIAL_STREAMS streams, for each runtime;
 *   2. the `timing` files, one runtime after the other, with nothing else running.
 *
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { JOB_ORDER, NODE24_EXCLUDE, SERIAL, SERIAL_SECONDS, SERIAL_STREAMS, TIMING } from './test-plan.mjs';

/** The first line of a failure message, short enough for a summary line. */
const firstLine = (m) =>
  String(m ?? '')
    .split('\n')[0]
    .slice(0, 300);

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);
const VITEST = path.join('node_modules', 'vitest', 'vitest.mjs');
const args = process.argv.slice(2);
const started = Date.now();
const seconds = (since) => `${Math.round((Date.now() - since) / 1000)} s`;

/** `**` spans folders, `*` stays within one: enough for the plan's patterns. */
function matcher(patterns) {
  const res = patterns.map((p) => {
    const source = p
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .split('**/')
      .map((part) => part.replace(/\*/g, '[^/]*'))
      .join('(?:.*/)?');
    return new RegExp(`^${source}$`);
  });
  return (file) => res.some((re) => re.test(file));
}

function testFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const file = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(file));
    else if (entry.name.endsWith('.test.ts')) out.push(file);
  }
  return out;
}

/** Longest first, each to the shorter stream. */
function split(files, streams) {
  const out = Array.from({ length: streams }, () => ({ files: [], seconds: 0 }));
  const weight = (f) => SERIAL_SECONDS[f] ?? 5;
  for (const file of [...files].sort((a, b) => weight(b) - weight(a))) {
    const target = out.reduce((a, b) => (b.seconds < a.seconds ? b : a));
    target.files.push(file);
    target.seconds += weight(file);
  }
  return out.filter((s) => s.files.length > 0);
}

function run(job) {
  return new Promise((resolve) => {
    const since = Date.now();
    const log = path.join('coverage', 'logs', `${job.name}.log`);
    const chunks = [];
    console.log(`[test] ${job.name}: started${job.note ? ` (${job.note})` : ''}`);
    const child = spawn(job.command, job.args, {
      env: { ...process.env, ...job.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('close', (code, signal) => {
      const output = Buffer.concat(chunks);
      writeFileSync(log, output);
      process.stdout.write(`\n[test] ===== ${job.name} =====\n`);
      process.stdout.write(output);
      const status = code ?? 1;
      console.log(
        `[test] ${job.name}: ${status === 0 ? 'passed' : `FAILED (exit ${code}${signal ? `, ${signal}` : ''})`} in ${seconds(since)}`,
      );
      resolve(status);
    });
  });
}

/** Runs jobs `slots` at a time, in order; resolves to the worst exit status. */
async function pool(jobs, slots) {
  let worst = 0;
  const queue = [...jobs];
  await Promise.all(
    Array.from({ length: Math.min(slots, queue.length) }, async () => {
      for (let job = queue.shift(); job; job = queue.shift()) worst = Math.max(worst, await run(job));
    }),
  );
  return worst;
}

const checks = {
  name: 'lint-typecheck',
  command: 'sh',
  args: ['-c', 'npm run -s lint && npm run -s typecheck'],
};

if (args.length > 0) {
  const status = await run(checks);
  const child = spawn(process.execPath, [VITEST, 'run', ...args], { stdio: 'inherit' });
  child.on('close', (code) => process.exit(status || (code ?? 1)));
} else {
  rmSync(path.join('coverage', 'parts'), { recursive: true, force: true });
  mkdirSync(path.join('coverage', 'parts'), { recursive: true });
  mkdirSync(path.join('coverage', 'logs'), { recursive: true });

  const all = [...testFiles('test'), ...testFiles('src')].sort();
  const isTiming = matcher(TIMING);
  const isSerial = matcher(SERIAL);
  const runtimes = [
    { id: 'node20', node: process.execPath, report: 'coverage/test-results.json', env: {}, exclude: [] },
  ];
  if (process.env.TEST_NODE24) {
    runtimes.push({
      id: 'node24',
      node: path.join(process.env.TEST_NODE24, 'node'),
      report: 'coverage/test-results-node24.json',
      env: {
        TEST_DIALECTS: 'sqlite',
        TEST_EXCLUDE: NODE24_EXCLUDE.join(','),
        PATH: `${process.env.TEST_NODE24}${path.delimiter}${process.env.PATH}`,
      },
      exclude: NODE24_EXCLUDE,
    });
  }

  const vitest = (rt, name, projects, files = [], note = '') => ({
    name: `${rt.id}-${name}`,
    note,
    command: rt.node,
    env: rt.env,
    part: `coverage/parts/${rt.id}-${name}.json`,
    args: [
      VITEST,
      'run',
      ...projects.flatMap((p) => ['--project', p]),
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=coverage/parts/${rt.id}-${name}.json`,
      '--passWithNoTests',
      ...files,
    ],
  });

  const parts = [];
  const streamsOf = (rt) => {
    const excluded = matcher(rt.exclude);
    const serial = all.filter((f) => isSerial(f) && !isTiming(f) && !excluded(f));
    return split(serial, SERIAL_STREAMS).map((s, i) =>
      vitest(rt, `serial-${i + 1}`, ['serial'], s.files, `${s.files.length} files, ~${s.seconds} s`),
    );
  };

  const rank = (job) => {
    const i = JOB_ORDER.findIndex((p) => matcher([p])(job.name));
    return i === -1 ? JOB_ORDER.length : i;
  };
  const shared = [
    checks,
    ...runtimes.flatMap((rt) => [
      vitest(rt, 'parallel', ['parallel']),
      vitest(rt, 'unit', ['unit']),
      ...streamsOf(rt),
    ]),
  ].sort((a, b) => rank(a) - rank(b));
  const timing = runtimes.map((rt) => vitest(rt, 'timing', ['timing']));

  if (process.env.TEST_PLAN === '1') {
    // Prints the jobs and their files, runs nothing.
    for (const [i, jobs] of [shared, timing].entries()) {
      for (const job of jobs)
        console.log(
          `phase ${i + 1} ${job.name}: ${job.args?.filter((a) => a.endsWith('.ts')).join(' ') ?? ''}`,
        );
    }
    process.exit(0);
  }

  let status = 0;
  for (const [i, jobs, slots] of [
    [1, shared, 2],
    [2, timing, 1],
  ]) {
    const since = Date.now();
    console.log(`[test] phase ${i}: ${jobs.map((j) => j.name).join(', ')}`);
    status = Math.max(status, await pool(jobs, slots));
    console.log(`[test] phase ${i} took ${seconds(since)}`);
    parts.push(...jobs.filter((j) => j.part));
  }

  // One report per runtime, as one `vitest run` would have written it; a job that wrote none counts
  // as a failed suite.
  for (const rt of runtimes) {
    const merged = { numPassedTests: 0, numFailedTests: 0, numPendingTests: 0, numTodoTests: 0 };
    Object.assign(merged, {
      numTotalTests: 0,
      numTotalTestSuites: 0,
      numPassedTestSuites: 0,
      numFailedTestSuites: 0,
      numPendingTestSuites: 0,
      numRuntimeErrorTestSuites: 0,
      startTime: started,
      success: true,
      testResults: [],
    });
    for (const job of parts.filter((j) => j.name.startsWith(`${rt.id}-`))) {
      let r;
      try {
        r = JSON.parse(readFileSync(job.part, 'utf8'));
      } catch {
        merged.numRuntimeErrorTestSuites += 1;
        merged.success = false;
        continue;
      }
      for (const key of Object.keys(merged)) {
        if (typeof merged[key] === 'number' && key !== 'startTime') merged[key] += r[key] ?? 0;
      }
      merged.success &&= r.success !== false;
      merged.testResults.push(...(r.testResults ?? []));
    }
    writeFileSync(rt.report, JSON.stringify(merged));
    // Name what failed or was skipped at the end, where a truncated CI log still shows it.
    for (const file of merged.testResults) {
      const rel = path.relative(process.cwd(), file.name ?? '');
      if (file.status === 'failed' && !(file.assertionResults ?? []).some((a) => a.status === 'failed'))
        console.log(`[test] ${rt.id} FAILED suite ${rel}: ${firstLine(file.message)}`);
      for (const a of file.assertionResults ?? []) {
        if (a.status === 'failed')
          console.log(`[test] ${rt.id} FAILED ${rel} > ${a.fullName}: ${firstLine(a.failureMessages?.[0])}`);
        else if (a.status === 'skipped' || a.status === 'pending')
          console.log(`[test] ${rt.id} skipped ${rel} > ${a.fullName}`);
      }
    }
    console.log(
      `[test] ${rt.id}: ${merged.numPassedTests} passed, ${merged.numFailedTests} failed` +
        (merged.numRuntimeErrorTestSuites
          ? `, ${merged.numRuntimeErrorTestSuites} suites without a report`
          : ''),
    );
  }
  console.log(`[test] all phases took ${seconds(started)}`);
  process.exit(status);
}
