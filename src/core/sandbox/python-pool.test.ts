import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { loopbackListeners } from '../../../test/helpers/loopback-listeners.js';
import { until } from '../../../test/helpers/until.js';
import { networkIsolation, probeNetworkIsolation, withoutNetwork } from './network-namespace.js';
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
    // (It starts once the interpreter has reported its previous run settled.)
    await until(() => pool.queued === 0, 'the endless run started');
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

  it('an interpreter a run left busy (an asyncio callback, a task, a loop in a callback) is ended and replaced', async () => {
    const one = new PythonPool({ workers: 1, memoryMb: 96, prelude: '' });
    try {
      expect((await one.run('__output__ = "warm"', '', 120_000, 'acct_a')).output).toBe('warm');
      for (const [left, pending] of [
        ['import asyncio\nasyncio.get_event_loop().call_later(60, print, "late")', 'Timeout'],
        [
          'import asyncio\nasync def spin():\n  while True:\n    await asyncio.sleep(0)\nasyncio.ensure_future(spin())',
          'Immediate',
        ],
        [
          'import asyncio\ndef hog():\n  while True:\n    pass\nasyncio.get_event_loop().call_soon(hog)',
          'Immediate',
        ],
      ] as const) {
        const [pid] = one.pids;
        const run = await one.run(`${left}\n__output__ = "answered"`, '', 120_000, 'acct_a');
        // The run's answer stands; what it left is named, and its process is gone.
        expect(run).toMatchObject({ output: 'answered', leftPending: [pending] });
        await until(() => !one.pids.includes(pid as number), 'the interpreter replaced', 30_000);
        // The account's next run gets a fresh interpreter and works.
        expect((await one.run('__output__ = "next"', '', 120_000, 'acct_a')).output).toBe('next');
      }
    } finally {
      await one.close();
    }
  }, 600_000);

  it('threads cannot be started to outlive a run', async () => {
    const run = await pool.run(
      'import threading\ntry:\n  threading.Thread(target=print).start()\n  __output__ = "started"\nexcept RuntimeError as e:\n  __output__ = str(e)',
      '',
      60_000,
      'acct_a',
    );
    expect(run.output).toBe("can't start new thread");
    expect(run.leftPending).toEqual([]);
  }, 180_000);

  it('an answer past the size bound is refused in the interpreter, before it crosses to the server', async () => {
    const small = new PythonPool({ workers: 1, memoryMb: 96, prelude: '', maxOutputChars: 1_000 });
    try {
      await expect(small.run('__output__ = "x" * 1001', '', 120_000, 'acct_a')).rejects.toMatchObject({
        limit: 'output',
        message: 'the answer has more than 1000 characters',
      });
      expect((await small.run('__output__ = "x" * 1000', '', 120_000, 'acct_a')).output).toHaveLength(1_000);
    } finally {
      await small.close();
    }
  }, 300_000);

  it('JavaScript running in an interpreter process (as an escape would) reads no file, spawns nothing, connects nowhere, resolves nothing', async () => {
    const net = await loopbackListeners();
    // In place of Pyodide's entry module: a module that tries what a sandbox escape would, and reports.
    const probe = `
      const tries = {};
      const attempt = async (name, f) => { try { tries[name] = 'ok: ' + String(await f()).slice(0, 30); } catch (e) { tries[name] = 'refused'; } };
      const fs = await import('node:fs');
      await attempt('read', () => fs.readFileSync('/etc/passwd', 'utf8'));
      await attempt('write', () => fs.writeFileSync('/tmp/python-sandbox-probe', 'x'));
      await attempt('spawn', async () => (await import('node:child_process')).spawnSync('true').status);
      await attempt('net', async () => { const net = await import('node:net'); return await new Promise((ok, ko) => { const s = net.connect(${net.tcpPort}, '127.0.0.1'); s.on('connect', () => ok('connected')); s.on('error', ko); }); });
      await attempt('fetch', () => fetch('http://127.0.0.1:${net.tcpPort}/'));
      await attempt('http', async () => { const http = await import('node:http'); return await new Promise((ok, ko) => { const r = http.get('http://127.0.0.1:${net.tcpPort}/', ok); r.on('error', ko); }); });
      await attempt('udp', async () => { const dgram = await import('node:dgram'); const s = dgram.createSocket('udp4'); return await new Promise((ok, ko) => s.send('x', ${net.dnsPort}, '127.0.0.1', (e) => e ? ko(e) : ok('sent'))); });
      const dns = await import('node:dns');
      await attempt('lookup', () => new Promise((ok, ko) => dns.lookup('localhost', (e, a) => e ? ko(e) : ok(a))));
      await attempt('promises.lookup', () => dns.promises.lookup('localhost'));
      await attempt('resolver', () => { const r = new dns.Resolver(); r.setServers(['127.0.0.1:${net.dnsPort}']); return new Promise((ok, ko) => r.resolve4('example.com', (e, a) => e ? ko(e) : ok(a))); });
      await attempt('promises.resolver', () => { const r = new dns.promises.Resolver(); r.setServers(['127.0.0.1:${net.dnsPort}']); return r.resolve4('example.com'); });
      await attempt('resolve4', () => dns.promises.resolve4('example.com'));
      await attempt('env', () => JSON.stringify(process.env) === '{}' ? (() => { throw new Error('empty'); })() : 'leaked');
      await attempt('worker', async () => new (await import('node:worker_threads')).Worker('1', { eval: true }));
      await attempt('binding', () => process.binding('fs'));
      process.send({ tries });
      process.exit(0);
    `;
    const { command, args } = pythonChildCommand();
    const child = spawn(command, args, {
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
            maxOutputChars: 1,
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
        udp: 'refused',
        lookup: 'refused',
        'promises.lookup': 'refused',
        resolver: 'refused',
        'promises.resolver': 'refused',
        resolve4: 'refused',
        env: 'refused',
        worker: 'refused',
        binding: 'refused',
      });
      expect(net.seen()).toEqual({ connections: 0, datagrams: 0 });
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await net.close();
    }
  }, 60_000);

  it('the OS layer alone (Linux): a process in the network namespace reaches no local server and no name server', async () => {
    const isolation = networkIsolation();
    if (!isolation.available) {
      // Where the OS offers no namespace the JavaScript layer above is the block; the reason is logged.
      expect(isolation.reason).toMatch(/\S/);
      return;
    }
    const net = await loopbackListeners();
    // Plain Node, none of the child's JavaScript refusals: only the namespace stands in the way.
    const code = `
      const net = require('node:net'), dgram = require('node:dgram'), dns = require('node:dns');
      const out = {};
      const tcp = new Promise((ok) => { const s = net.connect(${net.tcpPort}, '127.0.0.1'); s.on('connect', () => ok('connected')); s.on('error', (e) => ok(e.code)); });
      const udp = new Promise((ok) => { const s = dgram.createSocket('udp4'); s.send('x', ${net.dnsPort}, '127.0.0.1', (e) => { s.close(); ok(e ? e.code : 'sent'); }); });
      const resolver = new dns.promises.Resolver({ timeout: 500, tries: 1 });
      resolver.setServers(['127.0.0.1:${net.dnsPort}']);
      const query = resolver.resolve4('example.com').then((a) => 'resolved ' + a, (e) => e.code);
      const lookup = dns.promises.lookup('example.com').then((a) => 'resolved ' + a.address, (e) => e.code);
      Promise.all([tcp, udp, query, lookup]).then(([tcp, udp, query, lookup]) => { console.log(JSON.stringify({ tcp, udp, query, lookup })); });
    `;
    const { command, args } = withoutNetwork(process.execPath, ['-e', code]);
    const child = spawn(command, args, { env: {}, stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      let out = '';
      child.stdout.on('data', (chunk) => {
        out += chunk;
      });
      await new Promise((resolve) => child.on('exit', resolve));
      const result = JSON.parse(out) as Record<string, string>;
      expect(result.tcp).toBe('ENETUNREACH');
      expect(result.udp).toBe('ENETUNREACH');
      expect(result.query).not.toMatch(/^resolved/);
      expect(result.lookup).not.toMatch(/^resolved/);
      expect(net.seen()).toEqual({ connections: 0, datagrams: 0 });
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await net.close();
    }
  }, 60_000);

  it('without unshare on the PATH, the children start without a namespace and say why', () => {
    expect(probeNetworkIsolation('')).toEqual({
      available: false,
      reason: expect.stringMatching(/unshare|platform|linux/),
    });
  });
});
