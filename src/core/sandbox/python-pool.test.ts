import { fork } from 'node:child_process';
import { type AddressInfo, createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { PythonPool, PythonSandboxError, pythonChildCommand } from './python-pool.js';

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

  it('JavaScript running in an interpreter process (as an escape would) reads no file, spawns nothing, connects nowhere', async () => {
    let connections = 0;
    const server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    // In place of Pyodide's entry module: a module that tries what a sandbox escape would, and reports.
    const probe = `
      const tries = {};
      const attempt = async (name, f) => { try { tries[name] = 'ok: ' + String(await f()).slice(0, 30); } catch (e) { tries[name] = 'refused'; } };
      const fs = await import('node:fs');
      await attempt('read', () => fs.readFileSync('/etc/passwd', 'utf8'));
      await attempt('write', () => fs.writeFileSync('/tmp/python-sandbox-probe', 'x'));
      await attempt('spawn', async () => (await import('node:child_process')).spawnSync('true').status);
      await attempt('net', async () => { const net = await import('node:net'); return await new Promise((ok, ko) => { const s = net.connect(${port}, '127.0.0.1'); s.on('connect', () => ok('connected')); s.on('error', ko); }); });
      await attempt('fetch', () => fetch('http://127.0.0.1:${port}/'));
      await attempt('http', async () => { const http = await import('node:http'); return await new Promise((ok, ko) => { const r = http.get('http://127.0.0.1:${port}/', ok); r.on('error', ko); }); });
      await attempt('env', () => JSON.stringify(process.env) === '{}' ? (() => { throw new Error('empty'); })() : 'leaked');
      await attempt('worker', async () => new (await import('node:worker_threads')).Worker('1', { eval: true }));
      await attempt('binding', () => process.binding('fs'));
      process.send({ tries });
      process.exit(0);
    `;
    const { script, execArgv } = pythonChildCommand();
    const child = fork(script, [], {
      execArgv,
      env: {},
      serialization: 'json',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    try {
      const report = await new Promise<{ tries: Record<string, string> }>((resolve, reject) => {
        child.on('message', (m) => resolve(m as { tries: Record<string, string> }));
        child.on('exit', (code) => reject(new Error(`probe exited ${code}`)));
        child.send({
          init: {
            memoryBytes: 1,
            prelude: '',
            pyodideUrl: `data:text/javascript,${encodeURIComponent(probe)}`,
          },
        });
      });
      expect(report.tries).toEqual({
        read: 'refused',
        write: 'refused',
        spawn: 'refused',
        net: 'refused',
        fetch: 'refused',
        http: 'refused',
        env: 'refused',
        worker: 'refused',
        binding: 'refused',
      });
      expect(connections).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      server.close();
    }
  }, 60_000);
});
