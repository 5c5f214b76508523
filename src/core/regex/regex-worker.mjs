// Runs one user regular-expression test at a time, off the server's thread: the pool terminates this
// thread when a test overruns its deadline (a backtracking pattern cannot be interrupted any other way).
// Plain JS: a worker runs its file directly, with no TypeScript loader (the build copies it to dist).
import { parentPort } from 'node:worker_threads';
import { RE2JS } from 're2js';

/** Compiled patterns by engine, flags and source; small, a workflow reuses few. */
const compiled = new Map();
const CACHE_MAX = 200;

function compile(job) {
  const key = `${job.engine}/${job.flags}/${job.source}`;
  let re = compiled.get(key);
  if (re) return re;
  if (job.engine === 're2') {
    const flags =
      (job.flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0) |
      (job.flags.includes('m') ? RE2JS.MULTILINE : 0) |
      (job.flags.includes('s') ? RE2JS.DOTALL : 0);
    re = RE2JS.compile(job.source, flags);
  } else {
    re = new RegExp(job.source, job.flags);
  }
  if (compiled.size >= CACHE_MAX) compiled.clear();
  compiled.set(key, re);
  return re;
}

parentPort.on('message', (job) => {
  try {
    const re = compile(job);
    // A cached JavaScript RegExp with `g` or `y` keeps lastIndex between tests: n8n builds a new one each time.
    if (re instanceof RegExp) re.lastIndex = 0;
    parentPort.postMessage({ id: job.id, result: re.test(job.input) });
  } catch (error) {
    parentPort.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
});

// The pool starts a test's deadline from here on: loading the engines is not the test's time.
parentPort.postMessage({ ready: true });
