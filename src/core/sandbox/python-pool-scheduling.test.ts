import { describe, expect, it } from 'vitest';
import { until } from '../../../test/helpers/until.js';
import { PythonPool } from './python-pool.js';

/**
 * How the Python pool shares its interpreters between accounts: its own queue and turn rules, on
 * real Pyodide interpreters. The rules are plain JavaScript, so the Node 24 pass leaves this file out
 * (scripts/test-plan.mjs); python-pool.test.ts runs the interpreters themselves on both runtimes.
 */
/** Runs each busy account has waiting in the turns test. */
const BACKLOG = 6;

describe('Python pool scheduling (real Pyodide)', () => {
  it("one tenant's backlog leaves an interpreter to another (at most all but one per tenant)", async () => {
    const two = new PythonPool({ workers: 2, memoryMb: 96, prelude: '' });
    try {
      const busy = 'import time\nend = time.time() + 0.4\nwhile time.time() < end:\n  pass\n__output__ = "a"';
      // Both interpreters loaded first (each account then holds one), so the order below is the pool's.
      await Promise.all([two.run('', '', 120_000, 'acct_a'), two.run('', '', 120_000, 'acct_b')]);
      const finished: string[] = [];
      const track = (name: string, run: Promise<unknown>) => run.then(() => finished.push(name));
      const backlog = [1, 2, 3, 4].map((i) => track(`a${i}`, two.run(busy, '', 30_000, 'acct_a')));
      const other = track('b', two.run('__output__ = "b"', '', 30_000, 'acct_b'));
      await Promise.all([...backlog, other]);
      // acct_a holds one interpreter (its runs one after another); acct_b gets the other at once.
      expect(finished.indexOf('b')).toBeLessThan(finished.indexOf('a2'));
    } finally {
      await two.close();
    }
  }, 180_000);

  it("per-account queue: one account's backlog is refused its excess, never another account's first run", async () => {
    const small = new PythonPool({
      workers: 1,
      memoryMb: 96,
      prelude: '',
      maxQueue: 4,
      maxQueuePerTenant: 2,
    });
    try {
      const slow = 'import time\nend = time.time() + 0.5\nwhile time.time() < end:\n  pass\n__output__ = "a"';
      expect((await small.run('__output__ = "warm"', '', 120_000, 'acct_a')).output).toBe('warm');
      const first = small.run(slow, '', 60_000, 'acct_a');
      await until(() => small.queued === 0, "acct_a's first run started");
      const second = small.run(slow, '', 60_000, 'acct_a');
      const third = small.run(slow, '', 60_000, 'acct_a');
      // acct_a has 2 waiting (its bound), so its next is refused at once…
      await expect(small.run(slow, '', 60_000, 'acct_a')).rejects.toMatchObject({
        limit: 'queue',
        message: expect.stringMatching(/this account's Python runs already fill its queue/),
      });
      // …while acct_b and acct_c still get in line (4 waiting: the pool's bound).
      const b = small.run('__output__ = "b"', '', 120_000, 'acct_b');
      const c = small.run('__output__ = "c"', '', 120_000, 'acct_c');
      // acct_d's first run takes the place of the newest run of the account holding most (acct_a).
      const d = small.run('__output__ = "d"', '', 120_000, 'acct_d');
      await expect(third).rejects.toMatchObject({ limit: 'queue' });
      expect((await first).output).toBe('a');
      expect((await second).output).toBe('a');
      expect((await b).output).toBe('b');
      expect((await c).output).toBe('c');
      expect((await d).output).toBe('d');
    } finally {
      await small.close();
    }
  }, 600_000);

  it('turns: two busy accounts do not starve a third; a freed interpreter is handed over in turn', async () => {
    const two = new PythonPool({ workers: 2, memoryMb: 96, prelude: '', turnMs: 500, maxQueuePerTenant: 10 });
    try {
      // Runs of a second each (two turns), 6 per account: served in arrival order, acct_c would come
      // after all 12.
      const busy = (name: string) =>
        `import time\nend = time.time() + 1\nwhile time.time() < end:\n  pass\n__output__ = "${name}"`;
      await Promise.all([
        two.run('__output__ = "warm"', '', 120_000, 'acct_a'),
        two.run('__output__ = "warm"', '', 120_000, 'acct_b'),
      ]);
      const finished: string[] = [];
      const track = (name: string, run: Promise<unknown>) => run.then(() => finished.push(name));
      const backlog = (tenant: string) =>
        Array.from({ length: BACKLOG }, (_, i) =>
          track(`${tenant}${i + 1}`, two.run(busy(tenant), '', 60_000, `acct_${tenant}`)),
        );
      const a = backlog('a');
      const b = backlog('b');
      // Each holds one interpreter (its share), both busy, when acct_c arrives.
      await until(() => two.queued === 2 * BACKLOG - 2, 'acct_a and acct_b running');
      const c = track('c', two.run('__output__ = "c"', '', 120_000, 'acct_c'));
      await Promise.all([...a, ...b, c]);
      // acct_c's run came in turn: before the backlog of either other account was done.
      expect(finished.indexOf('c')).toBeLessThan(finished.indexOf(`a${BACKLOG}`));
      expect(finished.indexOf('c')).toBeLessThan(finished.indexOf(`b${BACKLOG}`));
    } finally {
      await two.close();
    }
  }, 600_000);
});
