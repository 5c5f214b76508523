import { afterEach, describe, expect, it } from 'vitest';
import { CpuPool, CpuTaskError, cpuTask } from './cpu-pool.js';

const fixture = new URL('./cpu-pool-fixture.js', import.meta.url);
const double = cpuTask<number, number>(fixture, 'double');
const spin = cpuTask<number, number>(fixture, 'spin');
const hog = cpuTask<null, number>(fixture, 'hog');
const fail = cpuTask<string, never>(fixture, 'fail');
const floats = cpuTask<number, { values: Float32Array; n: number }>(fixture, 'floats');

let pool: CpuPool;
afterEach(async () => {
  await pool?.close();
});

async function limitOf(promise: Promise<unknown>): Promise<string | null | undefined> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CpuTaskError);
  return (error as CpuTaskError).limit;
}

describe('CpuPool', () => {
  it('runs a task module function in a worker and returns typed arrays whole', async () => {
    pool = new CpuPool({ workers: 1, heapMb: 64, maxQueue: 10 });
    expect(await pool.run(double, 21, { timeoutMs: 10_000 })).toBe(42);
    const result = await pool.run(floats, 1000, { timeoutMs: 10_000 });
    expect(result.values).toBeInstanceOf(Float32Array);
    expect(result.values.length).toBe(1000);
    expect(result.values[999]).toBe(1.5);
  });

  it('terminates a runaway at its deadline, and the next call runs on a fresh worker', async () => {
    pool = new CpuPool({ workers: 1, heapMb: 64, maxQueue: 10 });
    await pool.run(double, 1, { timeoutMs: 10_000 });
    const started = performance.now();
    expect(await limitOf(pool.run(spin, 60_000, { timeoutMs: 300 }))).toBe('time');
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await pool.run(double, 2, { timeoutMs: 10_000 })).toBe(4);
    expect(pool.started).toBe(2);
  });

  it('fails a call that exceeds the heap limit, not the process', async () => {
    pool = new CpuPool({ workers: 1, heapMb: 64, maxQueue: 10 });
    expect(await limitOf(pool.run(hog, null, { timeoutMs: 20_000 }))).toBe('memory');
    expect(await pool.run(double, 3, { timeoutMs: 10_000 })).toBe(6);
  });

  it('passes a task error on, keeping the worker', async () => {
    pool = new CpuPool({ workers: 1, heapMb: 64, maxQueue: 10 });
    const error = await pool.run(fail, 'bad input', { timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ limit: null, message: 'bad input' });
    expect(await pool.run(double, 4, { timeoutMs: 10_000 })).toBe(8);
    expect(pool.started).toBe(1);
  });

  it('drops an aborted call: waiting, or running (its worker ends)', async () => {
    pool = new CpuPool({ workers: 1, heapMb: 64, maxQueue: 10 });
    const running = new AbortController();
    const waiting = new AbortController();
    const first = pool.run(spin, 60_000, { timeoutMs: 60_000, signal: running.signal });
    const second = pool.run(double, 5, { timeoutMs: 60_000, signal: waiting.signal });
    waiting.abort();
    expect(await limitOf(second)).toBe('aborted');
    running.abort();
    expect(await limitOf(first)).toBe('aborted');
    expect(await pool.run(double, 6, { timeoutMs: 10_000 })).toBe(12);
  });

  it('refuses calls beyond the queue bound and serves tenants in turn', async () => {
    pool = new CpuPool({ workers: 1, heapMb: 64, maxQueue: 3 });
    const order: string[] = [];
    const call = (tenant: string, n: number) =>
      pool.run(double, n, { timeoutMs: 10_000, tenant }).then(() => order.push(`${tenant}${n}`));
    const all = [call('a', 1), call('a', 2), call('b', 1)];
    expect(await limitOf(pool.run(double, 9, { timeoutMs: 10_000 }))).toBe('queue');
    await Promise.all(all);
    expect(order).toEqual(['a1', 'b1', 'a2']);
  });
});
