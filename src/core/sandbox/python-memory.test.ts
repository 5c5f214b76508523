import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../../../test/helpers/until.js';
import { residentMb, withDataLimit } from './process-memory.js';
import { DATA_OVERHEAD_MB, pythonChildCommand } from './python-child-command.js';
import { PythonPool, PythonSandboxError } from './python-pool.js';

// The review's probe (docs/security.md): Pyodide's JavaScript API found through gc, and ArrayBuffers
// allocated with it, outside the WebAssembly cap and the JavaScript heap's. Before the interpreter let go
// of that API, it was killed at ~330-350 MiB resident for its bound of 320 (docs/decisions.md).
const PROBE = `
import gc
api = [o for o in gc.get_objects() if type(o).__name__ == 'JsLoader'][0].jsproxy
U8 = api._module.HEAPU8.constructor
bufs = []
for _ in range(4):
    b = U8.new(200 * 1024 * 1024)
    b.fill(1)
    bufs.append(b)
__output__ = 'allocated %d MB' % (200 * len(bufs))
`;

const pool = new PythonPool({ workers: 1, memoryMb: 128, prelude: '' });

afterAll(async () => {
  await pool.close();
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('Python interpreters are bounded in memory at the process (Linux)', () => {
  it("the review's probe no longer reaches the JavaScript API: nothing allocated, an ordinary Python error", async () => {
    const [pid] =
      (await pool.run('__output__ = "warm"', '', 120_000, 'acct_a')).output === 'warm' ? pool.pids : [];
    const parentBefore = process.memoryUsage().rss;
    const error = await pool.run(PROBE, '', 60_000, 'acct_a').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PythonSandboxError);
    // No loader holds the API any more (they are collected once they let go of it).
    expect((error as Error).message).toMatch(
      /IndexError: list index out of range|'NoneType' object has no attribute '_module'/,
    );
    expect(process.memoryUsage().rss - parentBefore).toBeLessThan(100 * 1024 * 1024);
    // (Its prelude-less run counts as the interpreter failing, so it is replaced; the next run works.)
    expect((await pool.run('__output__ = "again"', '', 120_000, 'acct_a')).output).toBe('again');
    expect(pid).toBeGreaterThan(0);
  }, 300_000);

  it("a gc search finds no JavaScript object but the event loop's timer function", async () => {
    const run = await pool.run(
      `import gc
def is_proxy(value):
    return any(t.__name__ == 'JsProxy' for t in type(value).__mro__)
found = set()
for o in gc.get_objects():
    if is_proxy(o):
        found.add(repr(o))
    for value in gc.get_referents(o):
        if is_proxy(value):
            found.add(repr(value))
loaders = [o.jsproxy for o in gc.get_objects() if type(o).__name__ == 'JsLoader']
finders = [len(o.jsproxies) for o in gc.get_objects() if type(o).__name__ == 'JsFinder']
__output__ = repr((sorted(found), loaders, finders))`,
      '',
      120_000,
      'acct_a',
    );
    // Pyodide's asyncio loop keeps its scheduler (a function of setTimeout): asyncio needs it.
    const [found, loaders, finders] = JSON.parse(
      (run.output ?? '')
        .replace(/^\(/, '[')
        .replace(/\)$/, ']')
        .replaceAll("'", '"')
        .replaceAll('None', 'null'),
    ) as [string[], unknown[], number[]];
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/setTimeout/);
    expect(loaders.every((l) => l === null)).toBe(true);
    expect(finders.every((n) => n === 0)).toBe(true);
  }, 300_000);

  it.runIf(process.platform === 'linux')(
    'a process past its resident bound is killed: the run fails with the memory limit, the next run of the account works',
    async () => {
      // A bound of the WebAssembly cap alone (a loaded interpreter holds ~150-170 MiB): WebAssembly
      // memory, within its own cap, stands in for memory allocated outside the caps (no way is known any more).
      const tight = new PythonPool({ workers: 1, memoryMb: 256, residentOverheadMb: 0, prelude: '' });
      try {
        expect((await tight.run('__output__ = "warm"', '', 120_000, 'acct_a')).output).toBe('warm');
        const [pid] = tight.pids;
        const parentBefore = process.memoryUsage().rss;
        const error = await tight
          .run(
            'b = bytearray(200 * 1024 * 1024)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\n__output__ = "kept"',
            '',
            60_000,
            'acct_a',
          )
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(PythonSandboxError);
        expect(error).toMatchObject({ limit: 'memory' });
        expect((error as Error).message).toMatch(/more memory than its interpreter may hold .*limit 256 MiB/);
        await until(() => pid !== undefined && !alive(pid), 'the interpreter process to be gone');
        expect(process.memoryUsage().rss - parentBefore).toBeLessThan(100 * 1024 * 1024);
        expect((await tight.run('__output__ = "again"', '', 120_000, 'acct_a')).output).toBe('again');
        expect(tight.pids).not.toContain(pid);
      } finally {
        await tight.close();
      }
    },
    300_000,
  );

  it.runIf(process.platform === 'linux')(
    'at the default bound, a run using its WebAssembly memory up to its cap is left alone',
    async () => {
      const [pid] = pool.pids;
      const run = await pool.run(
        'b = bytearray(80 * 1024 * 1024)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\n__output__ = str(sum(b[::4096]))',
        '',
        120_000,
        'acct_a',
      );
      expect(Number(run.output)).toBeGreaterThan(20_000);
      // Past the cap itself: Python's own MemoryError, and the interpreter stays.
      const over = await pool.run(
        'try:\n    b = bytearray(200 * 1024 * 1024)\n    __output__ = "no"\nexcept MemoryError:\n    __output__ = "MemoryError"',
        '',
        120_000,
        'acct_a',
      );
      expect(over.output).toBe('MemoryError');
      expect(pool.pids).toEqual([pid]);
    },
    300_000,
  );

  it.runIf(process.platform === 'linux')(
    'reads resident memory from /proc, and nothing for a process that is not there',
    () => {
      expect(residentMb(process.pid)).toBeGreaterThan(10);
      expect(residentMb(2 ** 22 + 1)).toBeNull();
      expect(residentMb(undefined)).toBeNull();
    },
  );

  it('starts a child under RLIMIT_DATA where prlimit is on the PATH, as it is otherwise', () => {
    expect(withDataLimit('/bin/node', ['a.mjs'], 1024, '/nonexistent')).toEqual({
      command: '/bin/node',
      args: ['a.mjs'],
      limited: false,
    });
    const command = pythonChildCommand(128);
    if (command.dataLimited) {
      expect(command.command).toMatch(/prlimit$/);
      expect(command.args.slice(0, 2)).toEqual([`--data=${(128 + DATA_OVERHEAD_MB) * 1024 * 1024}`, '--']);
    } else expect(command.command).not.toMatch(/prlimit$/);
    expect(pythonChildCommand().dataLimited).toBe(false);
  });
});
