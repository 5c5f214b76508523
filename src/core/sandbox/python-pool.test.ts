import { afterAll, describe, expect, it } from 'vitest';
import { PythonPool, PythonSandboxError } from './python-pool.js';

// One interpreter for everyone: another tenant's run must end it and start a fresh one.
const pool = new PythonPool({
  workers: 1,
  memoryMb: 96,
  prelude: 'import json\n',
  maxQueue: 2,
});

afterAll(async () => {
  await pool.close();
});

const LEAVE = 'import json\njson.mark = "A was here"\n__output__ = "set"';
const READ = 'import json\n__output__ = str(getattr(json, "mark", None))';

describe('Python pool (real Pyodide)', () => {
  it('serves one tenant per interpreter: a full pool ends an idle one for another tenant', async () => {
    expect((await pool.run(LEAVE, '', 20_000, 'acct_a')).output).toBe('set');
    // The same tenant keeps its interpreter (and what it left in a module).
    expect((await pool.run(READ, '', 20_000, 'acct_a')).output).toBe('A was here');
    // Another tenant: a fresh interpreter, in place of the idle one.
    expect((await pool.run(READ, '', 20_000, 'acct_b')).output).toBe('None');
    expect(pool.size).toBe(1);
    // And back: acct_a's interpreter was ended, so its mark is gone too.
    expect((await pool.run(READ, '', 20_000, 'acct_a')).output).toBe('None');
  }, 180_000);

  it('refuses runs past its queue, and ends a run at its deadline', async () => {
    const slow = pool.run('while True:\n  pass', '', 1_000, 'acct_a');
    const waiting = [pool.run(READ, '', 20_000, 'acct_a'), pool.run(READ, '', 20_000, 'acct_a')];
    await expect(pool.run(READ, '', 20_000, 'acct_a')).rejects.toMatchObject({ limit: 'queue' });
    const error = await slow.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PythonSandboxError);
    expect(error).toMatchObject({ limit: 'time' });
    for (const run of await Promise.all(waiting)) expect(run.output).toBe('None');
  }, 180_000);

  it('prints are kept as logs, bounded', async () => {
    const run = await pool.run('for i in range(1000):\n  print(i)\n__output__ = "ok"', '', 20_000, 'acct_a');
    expect(run.output).toBe('ok');
    expect(run.logs).toHaveLength(200);
    expect(run.logs[0]).toEqual({ level: 'log', message: '0' });
  }, 60_000);

  it("one tenant's backlog leaves an interpreter to another (at most all but one per tenant)", async () => {
    const two = new PythonPool({ workers: 2, memoryMb: 96, prelude: '' });
    try {
      const busy = 'import time\nend = time.time() + 0.4\nwhile time.time() < end:\n  pass\n__output__ = "a"';
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
});
