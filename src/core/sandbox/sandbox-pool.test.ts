import { afterAll, describe, expect, it } from 'vitest';
import { SandboxError, SandboxPool } from './sandbox-pool.js';

// A guest with one function per runaway shape: each takes and returns a string.
const guest = `
globalThis.echo = (arg) => 'echo:' + arg;
globalThis.later = async (arg) => { await null; return 'later:' + arg; };
globalThis.fail = () => { throw new TypeError('guest says no'); };
globalThis.spin = () => { for (;;) {} };
// Array.prototype.join over a sparse array loops in C without polling the deadline.
globalThis.nativeLoop = () => String(new Array(120000000).join('').length);
globalThis.hoard = () => { const keep = []; for (;;) keep.push('x'.repeat(1 << 20) + keep.length); };
globalThis.hugeString = () => String(' '.repeat(140000000).length);
globalThis.recurse = () => { const f = (n) => f(n + 1) + 1; return String(f(0)); };
globalThis.leak = (arg) => { globalThis.kept = (globalThis.kept || '') + arg; return String(globalThis.kept.length); };
globalThis.grow = (arg) => String(('y'.repeat(1 << 20) + arg).repeat(12).length);
globalThis.digest = (arg) => __hostHash('sha256', arg);
globalThis.reach = () => JSON.stringify([typeof process, typeof require, typeof fetch, typeof setTimeout]);
`;

const pool = new SandboxPool({ scripts: [{ name: 'guest.js', code: guest }], workers: 2, memoryMb: 32 });
afterAll(() => pool.close());

/** Counts event-loop turns while `work` runs: a blocked main thread would count none. */
async function ticksDuring<T>(work: Promise<T>): Promise<{ ticks: number; result: PromiseSettledResult<T> }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const [result] = await Promise.allSettled([work]);
  clearInterval(timer);
  return { ticks, result: result as PromiseSettledResult<T> };
}

const rejection = async (work: Promise<unknown>): Promise<SandboxError> => {
  const settled = await Promise.allSettled([work]);
  const first = settled[0] as PromiseSettledResult<unknown>;
  if (first.status !== 'rejected') throw new Error('expected the call to fail');
  expect(first.reason).toBeInstanceOf(SandboxError);
  return first.reason as SandboxError;
};

describe('sandbox pool', () => {
  it('calls guest functions, sync and async', async () => {
    expect(await pool.call('echo', 'a', 2_000)).toBe('echo:a');
    expect(await pool.call('later', 'b', 2_000)).toBe('later:b');
  });

  it('reports a guest error as an error of the call, with no limit', async () => {
    const error = await rejection(pool.call('fail', '', 2_000));
    expect(error.limit).toBeNull();
    expect(error.message).toMatch(/guest says no/);
  });

  it('gives the guest nothing of the host: no process, require, network or timers', async () => {
    expect(JSON.parse(await pool.call('reach', '', 2_000))).toEqual([
      'undefined',
      'undefined',
      'undefined',
      'undefined',
    ]);
  });

  it('stops an interpreted endless loop at its deadline while the event loop keeps turning', async () => {
    const { ticks, result } = await ticksDuring(pool.call('spin', '', 300));
    expect(result.status).toBe('rejected');
    expect((result as PromiseRejectedResult).reason).toMatchObject({ limit: 'time' });
    expect(ticks).toBeGreaterThan(5);
    expect(await pool.call('echo', 'after', 2_000)).toBe('echo:after');
  });

  it('terminates a worker stuck in a native loop that never polls the deadline', async () => {
    const t0 = Date.now();
    const { ticks, result } = await ticksDuring(pool.call('nativeLoop', '', 200));
    expect(result.status).toBe('rejected');
    expect((result as PromiseRejectedResult).reason).toMatchObject({ limit: 'time' });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(ticks).toBeGreaterThan(5);
    expect(await pool.call('echo', 'fresh worker', 2_000)).toBe('echo:fresh worker');
  });

  it('fails an allocation past the memory limit in the guest, not the process', async () => {
    for (const fn of ['hoard', 'hugeString']) {
      const error = await rejection(pool.call(fn, '', 5_000));
      expect(error.limit).toBe('memory');
    }
    expect(await pool.call('echo', 'alive', 2_000)).toBe('echo:alive');
  });

  it('bounds recursion by the stack limit', async () => {
    const error = await rejection(pool.call('recurse', '', 5_000));
    expect(error.limit).toBe('stack');
  });

  it('starts a fresh runtime after a limit is hit', async () => {
    const first = Number(await pool.call('leak', 'xx', 2_000));
    expect(first).toBeGreaterThanOrEqual(2);
    await rejection(pool.call('spin', '', 100));
    // Both workers may have served `leak`; after a reset none holds more than it did.
    const after = Number(await pool.call('leak', 'y', 2_000));
    expect(after).toBeLessThanOrEqual(first + 1);
  });

  it('serves other calls while one worker is held by a runaway', async () => {
    const runaway = pool.call('spin', '', 1_500);
    const t0 = Date.now();
    expect(await pool.call('echo', 'meanwhile', 2_000)).toBe('echo:meanwhile');
    expect(Date.now() - t0).toBeLessThan(1_500);
    await rejection(runaway);
  });

  it("serves tenants in turn: one tenant's queued runaways do not hold another's call back", async () => {
    const single = new SandboxPool({ scripts: [{ name: 'g.js', code: guest }], workers: 1, memoryMb: 16 });
    const finished: string[] = [];
    const note = (label: string, work: Promise<unknown>) =>
      work.then(
        () => finished.push(label),
        () => finished.push(label),
      );
    const all = [
      note('a1', single.call('spin', '', 200, { tenant: 'a' })),
      note('a2', single.call('spin', '', 200, { tenant: 'a' })),
      note('a3', single.call('spin', '', 200, { tenant: 'a' })),
      note('b', single.call('echo', 'b', 2_000, { tenant: 'b' })),
    ];
    await Promise.all(all);
    expect(finished).toEqual(['a1', 'b', 'a2', 'a3']);
    await single.close();
  });

  it('starts every realm (an execution) from the pristine heap; calls of one realm may share it', async () => {
    const first = await pool.call('leak', 'ab', 2_000, { tenant: 't', realm: 'exec-1' });
    const again = await pool.call('leak', 'cd', 2_000, { tenant: 't', realm: 'exec-1' });
    expect([first, again]).toEqual(['2', '4']);
    // Another execution, of the same tenant or another, or none: nothing of exec-1's is there.
    expect(await pool.call('leak', 'x', 2_000, { tenant: 't', realm: 'exec-2' })).toBe('1');
    expect(await pool.call('leak', 'y', 2_000, { tenant: 'u', realm: 'exec-3' })).toBe('1');
    expect(await pool.call('leak', 'z', 2_000)).toBe('1');
    expect(await pool.call('leak', 'z', 2_000)).toBe('1');
    // And a call outside any execution leaves nothing for the next execution either.
    expect(await pool.call('leak', 'w', 2_000, { tenant: 'u', realm: 'exec-4' })).toBe('1');
  });

  it('keeps working across many realm switches, with the heap grown and host functions called in between', async () => {
    const { createHash } = await import('node:crypto');
    for (let i = 0; i < 30; i++) {
      const scope = { tenant: 't', realm: `r${i % 3}` };
      expect(await pool.call('grow', String(i), 5_000, scope)).toBe(
        String(12 * ((1 << 20) + String(i).length)),
      );
      expect(await pool.call('digest', `text ${i}`, 2_000, scope)).toBe(
        createHash('sha256').update(`text ${i}`).digest('hex'),
      );
      expect(await pool.call('leak', 'abc', 2_000, { tenant: 't', realm: `other ${i}` })).toBe('3');
    }
  }, 60_000);

  it("caps the workers one tenant holds: another tenant's call finds a free one at once", async () => {
    const capped = new SandboxPool({
      scripts: [{ name: 'g.js', code: guest }],
      workers: 2,
      memoryMb: 16,
      maxPerTenant: 1,
    });
    await Promise.all([capped.call('echo', 'warm', 2_000), capped.call('echo', 'warm', 2_000)]);
    const runaways = [1, 2].map(() => capped.call('spin', '', 1_500, { tenant: 'a' }).catch(() => 'stopped'));
    expect(capped.busyFor('a')).toBe(1);
    const t0 = Date.now();
    expect(await capped.call('echo', 'b', 2_000, { tenant: 'b' })).toBe('echo:b');
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(await Promise.all(runaways)).toEqual(['stopped', 'stopped']);
    await capped.close();
  });

  it('loads a guest module as the build emits it (tsc appends `export {}` to a module-typed .js file)', async () => {
    const built = new SandboxPool({
      scripts: [
        { name: 'guest.js', code: "globalThis.hello = (a) => 'hi ' + a;\nexport {};\n", module: true },
      ],
      workers: 1,
      memoryMb: 16,
    });
    expect(await built.call('hello', 'there', 2_000)).toBe('hi there');
    await built.close();
  });

  it('refuses calls beyond its queue and after close', async () => {
    const small = new SandboxPool({
      scripts: [{ name: 'g.js', code: guest }],
      workers: 1,
      memoryMb: 16,
      maxQueue: 2,
    });
    const queued = [small.call('echo', '1', 2_000), small.call('echo', '2', 2_000)];
    expect((await rejection(small.call('echo', '3', 2_000))).limit).toBe('queue');
    expect(await Promise.all(queued)).toEqual(['echo:1', 'echo:2']);
    await small.close();
    expect((await rejection(small.call('echo', '4', 2_000))).message).toMatch(/closed/);
  });

  it('a full queue refuses the tenant that holds most of it, not another tenant', async () => {
    const small = new SandboxPool({
      scripts: [{ name: 'g.js', code: guest }],
      workers: 1,
      memoryMb: 16,
      maxQueue: 20,
    });
    // Tenant a holds the worker until its deadline and fills the whole queue behind it (one execution's
    // items evaluated in parallel can do that), then tenant b asks for one call.
    const busy = small.call('spin', '', 300, { tenant: 'a' });
    const flood = Array.from({ length: 25 }, (_, i) => small.call('echo', `a${i}`, 2_000, { tenant: 'a' }));
    const outcomes = Promise.allSettled([busy, ...flood]);
    const other = small.call('echo', 'b', 2_000, { tenant: 'b' });
    expect((await Promise.allSettled([other]))[0]).toEqual({ status: 'fulfilled', value: 'echo:b' });
    const settled = await outcomes;
    const refused = settled.filter((r) => r.status === 'rejected' && r.reason.limit === 'queue');
    // a's calls past the bound, and the newest of its queued ones, which gave b its place.
    expect(refused).toHaveLength(7);
    await small.close();
  });
});

describe('sandbox pool start-up', () => {
  it('warms a worker ahead of any call; the first call waits for it rather than booting another', async () => {
    const warmed = new SandboxPool({
      scripts: [{ name: 'guest.js', code: guest }],
      workers: 2,
      memoryMb: 32,
    });
    try {
      warmed.warm(1);
      expect(warmed.size).toBe(1);
      // Arrives while the warmed worker boots: it is served by that worker, no second one starts.
      await expect(warmed.call('echo', 'first', 5000)).resolves.toBe('echo:first');
      expect(warmed.size).toBe(1);
      warmed.warm(5);
      expect(warmed.size).toBe(2);
    } finally {
      await warmed.close();
    }
  });

  it('starts a worker per waiting call, up to its size, when none is starting', async () => {
    const cold = new SandboxPool({ scripts: [{ name: 'guest.js', code: guest }], workers: 2, memoryMb: 32 });
    try {
      const calls = [
        cold.call('echo', 'a', 5000),
        cold.call('echo', 'b', 5000),
        cold.call('echo', 'c', 5000),
      ];
      expect(cold.size).toBe(2);
      await expect(Promise.all(calls)).resolves.toEqual(['echo:a', 'echo:b', 'echo:c']);
    } finally {
      await cold.close();
    }
  });
});
