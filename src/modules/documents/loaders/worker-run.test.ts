import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runInWorker, workerSlots } from './worker-run.js';

/** A parser stand-in: posts its input back after `ms` (a timer, so it holds its slot that long). */
const dir = mkdtempSync(path.join(tmpdir(), 'worker-run-'));
const SLOW = path.join(dir, 'slow.mjs');
writeFileSync(
  SLOW,
  "import { parentPort, workerData } from 'node:worker_threads';\nsetTimeout(() => parentPort.postMessage(workerData.id), workerData.ms);\n",
);
const url = pathToFileURL(SLOW);
const bounds = (tenant: string) => ({ timeoutMs: 30_000, heapMb: 32, what: 'test input', tenant });

describe('parser workers: a bounded number at once, waiting reads in turn by account', () => {
  it('never runs more workers than its slots; a second account is served before the first one’s backlog', async () => {
    const { slots } = workerSlots();
    const finished: string[] = [];
    let most = 0;
    const watch = setInterval(() => {
      most = Math.max(most, workerSlots().running);
    }, 5);
    const run = (tenant: string, id: string) =>
      runInWorker<string>(url, { id, ms: 150 }, [], bounds(tenant)).then((done) => {
        finished.push(done);
        return done;
      });
    // Account A fills every slot and queues six more; account B then asks for one read.
    const a = Array.from({ length: slots + 6 }, (_, i) => run('acct_a', `a${i}`));
    const b = run('acct_b', 'b0');
    expect(workerSlots().waiting).toBe(7);
    await Promise.all([...a, b]);
    clearInterval(watch);
    expect(most).toBeLessThanOrEqual(slots);
    expect(most).toBeGreaterThan(0);
    // B waited behind at most one of A's waiting reads, not behind all six.
    expect(finished.indexOf('b0')).toBeLessThanOrEqual(slots + 1);
    expect(workerSlots()).toEqual({ slots, running: 0, waiting: 0 });
  }, 60_000);

  it('refuses an account’s reads past its waiting bound with a 503, and a read that waits too long fails', async () => {
    const { slots } = workerSlots();
    const busy = Array.from({ length: slots }, (_, i) =>
      runInWorker<string>(url, { id: `h${i}`, ms: 400 }, [], bounds('acct_hog')),
    );
    const waiting = Array.from({ length: 20 }, (_, i) =>
      runInWorker<string>(url, { id: `w${i}`, ms: 1 }, [], bounds('acct_hog')).catch((e: Error) => e),
    );
    await expect(runInWorker(url, { id: 'x', ms: 1 }, [], bounds('acct_hog'))).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
    });
    const late = runInWorker(url, { id: 'late', ms: 1 }, [], { ...bounds('acct_other'), timeoutMs: 50 });
    await expect(late).rejects.toThrow(/waited longer than 50 ms/);
    await Promise.all([...busy, ...waiting]);
    expect(workerSlots().running).toBe(0);
  }, 60_000);
});
