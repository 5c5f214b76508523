import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePythonSandbox } from '../../src/modules/workflows/engine/python/run-python.js';
import type { TestPlatform } from '../helpers/platform.js';
import { createWorkflow, n8nNode, workflowPlatform } from './support.js';

/**
 * Tenant isolation of the workflow engine (the wave-8 audit, kept as a regression test), as an attacker
 * holding account A's Admin key, with account B as the victim. Probes whose point was timing (runaways,
 * the event loop under large data, fairness under load) moved to their own suites (isolation,
 * fairness, executions-list-data, webhook-answer-guard, the nodes' pool tests); the numbers kept are
 * the audit's. Each probe asserts the SAFE behaviour: the attempt fails in the run's own
 * error (or is refused at save), the server stays healthy, and B's data and runs are unaffected.
 * SQLite only; one platform; loopback servers on port 0.
 */

const CANARY = `canary-${randomBytes(8).toString('hex')}`;
const ENCRYPTION_KEY = `audit-${randomBytes(24).toString('hex')}`;
const B_SECRET = `b-credential-secret-${randomBytes(6).toString('hex')}`;
const B_FILE_SECRET = `b-file-secret-${randomBytes(6).toString('hex')}`;
const B_VARIABLE = `b-variable-${randomBytes(6).toString('hex')}`;
const CODE_TIMEOUT_MS = 3_000;

type Json = Record<string, unknown>;
interface Execution {
  id: string;
  status: string;
  data?: {
    resultData: {
      runData: Record<string, Array<{ data?: { main: Array<Array<{ json: Json }>> }; error?: Json }>>;
      error?: { message: string; node?: string };
    };
  };
}

/** What an HTTP server on loopback saw: every request line and every TCP connection. */
interface Recorder {
  server: Server;
  port: number;
  requests: Array<{ url: string; headers: IncomingMessage['headers'] }>;
  connections: number;
}

async function recorder(handler?: (req: IncomingMessage, res: import('node:http').ServerResponse) => void) {
  const rec: Recorder = { server: undefined as never, port: 0, requests: [], connections: 0 };
  rec.server = createServer((req, res) => {
    rec.requests.push({ url: req.url ?? '', headers: req.headers });
    if (handler) return handler(req, res);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ internal: 'metadata-token-xyz' }));
  });
  rec.server.on('connection', () => {
    rec.connections++;
  });
  await new Promise<void>((r) => rec.server.listen(0, '127.0.0.1', r));
  rec.port = (rec.server.address() as AddressInfo).port;
  return rec;
}

const close = (s: Server) =>
  new Promise<void>((r) => {
    s.closeAllConnections();
    s.close(() => r());
  });

/** A second account (its id as well as an Admin key): the victim. */
async function victimAccount(p: TestPlatform): Promise<{ id: string; key: string }> {
  const auth = p.ctx.apis.auth;
  if (!auth) throw new Error('auth module missing');
  const id = `acct_victim_${randomBytes(4).toString('hex')}`;
  await p.ctx.db
    .insertInto('accounts')
    .values({
      id,
      email: `${id}@example.com`,
      name: 'Victim',
      password_hash: null,
      created_at: new Date().toISOString(),
    })
    .execute();
  const created = await auth.keys.create(
    id,
    { name: 'victim', type: 'production', role: 'Admin', services: ['*'] } as never,
    null,
  );
  return { id, key: created.key };
}

const trigger = () => n8nNode('Start', 'manualTrigger', 1, {});
const code = (jsCode: string, extra: Json = {}) => n8nNode('Code', 'code', 2, { jsCode, ...extra });
const python = (pythonCode: string) =>
  n8nNode('Code', 'code', 2, { language: 'python', mode: 'runOnceForAllItems', pythonCode });
const setExpr = (value: string, name = 'Set') =>
  n8nNode(name, 'set', 3.4, {
    assignments: { assignments: [{ id: 'r', name: 'result', value, type: 'string' }] },
    options: {},
  });
const httpGet = (url: string, options: Json = {}) => n8nNode('Fetch', 'httpRequest', 4.2, { url, options });

/** A workflow of `nodes` chained in order. */
function chain(name: string, nodes: Json[], settings?: Json) {
  const connections: Json = {};
  for (let i = 1; i < nodes.length; i++)
    connections[nodes[i - 1]?.name as string] = {
      main: [[{ node: nodes[i]?.name as string, type: 'main', index: 0 }]],
    };
  return { name, nodes, connections, ...(settings ? { settings } : {}) };
}

describe('sandbox and tenancy audit (attacker: account A; victim: account B)', () => {
  let p: TestPlatform;
  let keyA: string;
  let victim: { id: string; key: string };
  let filesDir: string;
  let allowed: Recorder; // reachable by name:port (OUTBOUND_ALLOW_HOSTS)
  let internal: Recorder; // an internal service: must never be reached
  let bCredentialId: string;
  let bWorkflowId: string;
  let bExecutionId: string;
  const savedEnv = process.env.AUDIT_CANARY_SECRET;

  beforeAll(async () => {
    process.env.AUDIT_CANARY_SECRET = CANARY;
    internal = await recorder();
    allowed = await recorder((req, res) => {
      // Redirects onward to the internal service by its address (a different host than the allowed name).
      if (req.url?.startsWith('/redirect')) {
        res.statusCode = 302;
        res.setHeader('location', `http://127.0.0.1:${internal.port}/via-redirect`);
        return res.end();
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ headers: req.headers, url: req.url }));
    });
    filesDir = await mkdtemp(path.join(tmpdir(), 'audit-sandbox-'));
    p = await workflowPlatform('sqlite', {
      OUTBOUND_ALLOW_HOSTS: `localhost:${allowed.port}`,
      ENCRYPTION_KEY,
      CODE_NODE_TIMEOUT_MS: String(CODE_TIMEOUT_MS),
      EXPRESSION_TIMEOUT_MS: '1000',
      EXPRESSION_WORKERS: '2',
      MANUAL_RUN_WAIT_MS: '45000',
      WORKFLOW_FILES_DIR: filesDir,
      WORKFLOW_PYTHON_ENABLED: 'true',
      PYTHON_WORKERS: '2',
    });
    keyA = p.adminKey;
    victim = await victimAccount(p);

    // The victim's data: a credential, a variable, a workflow with an execution, a file.
    const cred = await p.request({
      method: 'POST',
      url: '/api/v1/credentials',
      key: victim.key,
      payload: { name: 'victim-cred', type: 'httpHeaderAuth', data: { name: 'X-Victim', value: B_SECRET } },
    });
    expect(cred.statusCode, cred.body).toBe(201);
    bCredentialId = (cred.json() as { id: string }).id;
    const variable = await p.request({
      method: 'POST',
      url: '/api/v1/variables',
      key: victim.key,
      payload: { key: 'victimVar', value: B_VARIABLE },
    });
    expect(variable.statusCode, variable.body).toBeLessThan(300);
    bWorkflowId = await createWorkflow(
      p,
      chain('victim flow', [trigger(), setExpr(`=${B_SECRET}`)]),
      victim.key,
    );
    const run = await runAs(victim.key, bWorkflowId);
    expect(run.status).toBe('success');
    bExecutionId = run.id;
    await mkdir(path.join(filesDir, victim.id), { recursive: true });
    await writeFile(path.join(filesDir, victim.id, 'secret.txt'), B_FILE_SECRET);
  }, 120_000);

  afterAll(async () => {
    if (savedEnv === undefined) delete process.env.AUDIT_CANARY_SECRET;
    else process.env.AUDIT_CANARY_SECRET = savedEnv;
    await p?.close();
    await closePythonSandbox();
    await close(allowed.server);
    await close(internal.server);
    await rm(filesDir, { recursive: true, force: true });
  });

  /** Runs a saved workflow (manual run) and answers the ended execution. */
  async function runAs(key: string, id: string): Promise<Execution> {
    const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/run`, payload: {}, key });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Execution;
  }

  /** Saves `nodes` (after a Manual Trigger) as account A (or `key`) and runs them. */
  async function attack(nodes: Json[], key = keyA, settings?: Json): Promise<Execution> {
    const id = await createWorkflow(
      p,
      chain(`probe ${randomBytes(3).toString('hex')}`, [trigger(), ...nodes], settings),
      key,
    );
    return runAs(key, id);
  }

  const outputOf = (e: Execution, node: string) =>
    (e.data?.resultData.runData[node]?.[0]?.data?.main[0] ?? []).map((i) => i.json);
  const errorOf = (e: Execution) => e.data?.resultData.error?.message ?? '';
  const everything = (e: Execution) => JSON.stringify(e);

  /** The server answers /health, and the victim's own Code node runs normally right after. */
  async function victimStillFine(maxMs = 10_000) {
    const health = await p.app.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    const t0 = Date.now();
    const ok = await attack(
      [
        code(
          'return [{ json: { sum: [1, 2, 3].reduce((a, b) => a + b, 0), proto: Object.keys(Object.prototype).length, x: ({}).polluted ?? null } }];',
        ),
      ],
      victim.key,
    );
    expect(ok.status, everything(ok)).toBe('success');
    expect(outputOf(ok, 'Code')).toEqual([{ sum: 6, proto: 0, x: null }]);
    expect(Date.now() - t0).toBeLessThan(maxMs);
  }

  // ---------------------------------------------------------------- reach the host from Code

  it('01 Code: require, process, module, dynamic import and fetch are not there', async () => {
    const e = await attack([
      code(`
        const out = {};
        out.process = typeof process;
        out.module = typeof module;
        out.fetch = typeof fetch;
        out.XMLHttpRequest = typeof XMLHttpRequest;
        out.Deno = typeof Deno;
        try { require('child_process'); out.require = 'loaded'; } catch (e) { out.require = 'refused'; }
        try { await import('node:fs'); out.import = 'loaded'; } catch (e) { out.import = 'refused'; }
        try { await import('std'); out.std = 'loaded'; } catch (e) { out.std = 'refused'; }
        try { await import('os'); out.os = 'loaded'; } catch (e) { out.os = 'refused'; }
        return [{ json: out }];`),
    ]);
    expect(e.status, everything(e)).toBe('success');
    expect(outputOf(e, 'Code')).toEqual([
      {
        process: 'undefined',
        module: 'undefined',
        fetch: 'undefined',
        XMLHttpRequest: 'undefined',
        Deno: 'undefined',
        require: 'refused',
        import: 'refused',
        std: 'refused',
        os: 'refused',
      },
    ]);
  });

  it('02 Code: the Function constructor and `this` of callbacks reach only the guest global, with no host handle', async () => {
    const e = await attack([
      code(`
        const g1 = (function () { return this; })();
        const g2 = Function('return this')();
        const g3 = [0].map(function () { return this; })[0];
        const g4 = (async function () {}).constructor('return this')();
        const names = Object.getOwnPropertyNames(Function('return globalThis')());
        const bad = ['process', 'require', 'Buffer$host', 'setTimeout', 'setInterval', 'fetch', 'WebAssembly', 'os', 'std', 'scriptArgs'];
        let viaCtor = 'none';
        try { viaCtor = typeof ({}).constructor.constructor('return process')(); } catch (e) { viaCtor = 'threw'; }
        return [{ json: {
          sameGlobal: g2 === Function('return globalThis')(),
          g1: typeof g1, g3: typeof g3, g4Process: typeof (await g4)?.process,
          present: bad.filter((n) => names.includes(n)),
          viaCtor,
        } }];`),
    ]);
    expect(e.status, everything(e)).toBe('success');
    const [out] = outputOf(e, 'Code');
    expect(out?.present).toEqual([]);
    expect(out?.viaCtor === 'undefined' || out?.viaCtor === 'threw').toBe(true);
    expect(out?.g4Process).toBe('undefined');
  });

  it('03 Code: this.helpers / $helpers offer no outbound HTTP (n8n exposes this.helpers.httpRequest)', async () => {
    const before = internal.requests.length;
    const e = await attack([
      code(`
        const tries = [];
        for (const f of [
          () => this.helpers.httpRequest({ url: 'http://127.0.0.1:${internal.port}/from-helpers' }),
          () => this.helpers.request('http://127.0.0.1:${internal.port}/from-helpers'),
          () => $helpers.httpRequest({ url: 'http://127.0.0.1:${internal.port}/from-helpers' }),
        ]) {
          try { const r = await f(); tries.push('answered ' + JSON.stringify(r)); } catch (e) { tries.push('refused'); }
        }
        return [{ json: { tries } }];`),
    ]);
    expect(everything(e)).not.toContain('metadata-token-xyz');
    expect(internal.requests.length).toBe(before);
  });

  it('04 Code: planting on shared built-ins (Object/Array/JSON/Promise prototypes) fails or stays in the run', async () => {
    const e = await attack([
      code(`
        const tried = [];
        const plant = (what, f) => { try { f(); tried.push(what); } catch {} };
        plant('Object.prototype.polluted', () => { Object.prototype.polluted = 'A'; });
        plant('Array.prototype.map', () => { Array.prototype.map = function () { return ['hijacked']; }; });
        plant('JSON.stringify', () => { JSON.stringify = () => '"hijacked"'; });
        plant('Promise.prototype.then', () => { Promise.prototype.then = function () {}; });
        plant('Error.prepareStackTrace', () => { Error.prepareStackTrace = () => 'hijacked'; });
        plant('Error.captureStackTrace', () => { Error.captureStackTrace = () => {}; });
        plant('Symbol.for registry', () => { Symbol.for('audit-victim-symbol').description; });
        plant('Object.defineProperty(Object.prototype, toJSON)', () => Object.defineProperty(Object.prototype, 'toJSON', { get() { return () => 'hijacked'; } }));
        plant('globalThis.runCode', () => { globalThis.runCode = async () => '{"ok":true,"items":[],"logs":[]}'; });
        plant('globalThis.evaluateN8n', () => { globalThis.evaluateN8n = () => '{"ok":true,"values":[{"v":"hijacked"}]}'; });
        return [{ json: { tried } }];`),
    ]);
    expect(e.status).toBe('success');
    // Whatever the attacker managed within its own run, the victim's next runs see pristine built-ins.
    const v = await attack(
      [
        code(
          'return [{ json: { p: ({}).polluted ?? null, m: [1].map((x) => x + 1), j: JSON.stringify({ a: 1 }), t: typeof Promise.prototype.then, s: Symbol.keyFor(Symbol.for("audit-victim-symbol")) } }];',
        ),
        setExpr('={{ [1, 2].map((x) => x * 2).join(",") + ({}).polluted }}'),
      ],
      victim.key,
    );
    expect(v.status, everything(v)).toBe('success');
    expect(outputOf(v, 'Code')).toEqual([
      { p: null, m: [2], j: '{"a":1}', t: 'function', s: 'audit-victim-symbol' },
    ]);
    expect(outputOf(v, 'Set')[0]?.result).toBe('2,4undefined');
  });

  it('05 Code: returned objects with getters / toJSON / then / valueOf traps run in the guest, not the host', async () => {
    const e = await attack([
      code(`
        class Trap { toJSON() { return { fromToJSON: typeof process }; } }
        return [{ json: {
          get getter() { return typeof process + '/' + typeof module; },
          trap: new Trap(),
          valueOf() { return 42; },
          toString() { return 'x'; },
          nested: { [Symbol.toPrimitive]() { return 'y'; } },
        } }];`),
    ]);
    expect(e.status, everything(e)).toBe('success');
    const [out] = outputOf(e, 'Code');
    expect(out?.getter).toBe('undefined/undefined');
    expect(out?.trap).toEqual({ fromToJSON: 'undefined' });
    // No function crossed into the host's data.
    expect(Object.hasOwn(out ?? {}, 'valueOf')).toBe(false);
    // A toJSON that never returns and a thenable that never settles fail the run, bounded.
    const t0 = Date.now();
    const loop = await attack([
      code('class T { toJSON() { for (;;) {} } } return [{ json: { t: new T() } }];'),
    ]);
    expect(loop.status).toBe('error');
    expect(errorOf(loop)).toMatch(/took longer than|interrupted|time/i);
    const thenable = await attack([code('return { then() {} };')]);
    expect(thenable.status).toBe('error');
    expect(Date.now() - t0).toBeLessThan(CODE_TIMEOUT_MS * 2 + 8_000);
    await victimStillFine();
  });

  it('06 Code: a cyclic return value and a deeply nested one fail the run, not the server', async () => {
    const cyclic = await attack([code('const o = { a: 1 }; o.self = o; return [{ json: o }];')]);
    expect(cyclic.status).toBe('error');
    expect(errorOf(cyclic)).toMatch(/deeper|levels|cycl|circular/i);
    const deep = await attack([
      code(
        'let o = {}; const root = o; for (let i = 0; i < 100000; i++) { o.n = {}; o = o.n; } return [{ json: root }];',
      ),
    ]);
    expect(deep.status).toBe('error');
    await victimStillFine();
  });

  it('07 Code: an error thrown by the code carries no host stack, path or secret', async () => {
    const e = await attack([
      code(`
        const err = new Error('boom');
        const stack = String(err.stack);
        let inner = '';
        try { null.x; } catch (e) { inner = String(e.stack); }
        let asyncStack = '';
        try { await (async () => { await null; throw new Error('late'); })(); } catch (e) { asyncStack = String(e.stack); }
        throw new Error('STACKS ' + stack + ' | ' + inner + ' | ' + asyncStack);`),
    ]);
    expect(e.status).toBe('error');
    const text = everything(e);
    expect(text).not.toContain(process.cwd());
    expect(text).not.toMatch(/node_modules|node:internal|\/src\/core\/|\/src\/modules\//);
    expect(text).not.toContain(ENCRYPTION_KEY);
  });

  // ---------------------------------------------------------------- stall the server or the victim

  it('10 Code: huge allocations and deep recursion fail the run; the worker serves the next account', async () => {
    const big = await attack([code("const a = []; for (;;) a.push('x'.repeat(1 << 20) + a.length);")]);
    expect(big.status).toBe('error');
    expect(errorOf(big)).toMatch(/memory|too large|sandbox/i);
    const huge = await attack([code("return [{ json: { s: 'x'.repeat(2 ** 29) } }];")]);
    expect(huge.status).toBe('error');
    const deep = await attack([code('const f = (n) => f(n + 1) + 1; return [{ json: { n: f(0) } }];')]);
    expect(deep.status).toBe('error');
    expect(errorOf(deep)).toMatch(/stack|recursion|too much|too deeply/i);
    await victimStillFine();
  });

  it('11 Code: promises that never settle, microtask floods and timer floods are bounded', async () => {
    const t0 = Date.now();
    const never = await attack([code('await new Promise(() => {}); return [];')]);
    expect(never.status).toBe('error');
    const flood = await attack([
      code('const f = () => Promise.resolve().then(f); f(); await new Promise(() => {});'),
    ]);
    expect(flood.status).toBe('error');
    const timers = await attack([
      code(`let n = 0;
        try { for (let i = 0; i < 1e6; i++) setTimeout(() => n++, 0); } catch (e) { return [{ json: { timers: 'absent' } }]; }
        return [{ json: { timers: 'present' } }];`),
    ]);
    expect(outputOf(timers, 'Code')).toEqual([{ timers: 'absent' }]);
    expect(Date.now() - t0).toBeLessThan(3 * CODE_TIMEOUT_MS + 10_000);
    await victimStillFine();
  });

  it('14 Expressions: no host objects (process, require, constructor chains) are reachable', async () => {
    const e = await attack([
      setExpr(
        "={{ [typeof process, typeof require, typeof this?.process, (() => { try { return typeof ({}).constructor.constructor('return process')(); } catch (e) { return 'threw'; } })(), typeof $json.constructor.constructor('return globalThis')().process].join(',') }}",
      ),
    ]);
    expect(e.status, everything(e)).toBe('success');
    const parts = String(outputOf(e, 'Set')[0]?.result).split(',');
    expect(parts.filter((x) => x !== 'undefined' && x !== 'threw')).toEqual([]);
  });

  // ---------------------------------------------------------------- read the victim's data

  it("16 $env holds no platform secret, no server environment; $vars holds only the caller's own", async () => {
    const e = await attack([
      setExpr('={{ JSON.stringify($env) }}', 'Env'),
      setExpr('={{ JSON.stringify($vars) }}', 'Vars'),
      code('return [{ json: { env: JSON.stringify($env), vars: JSON.stringify($vars) } }];'),
    ]);
    expect(e.status, everything(e)).toBe('success');
    const text = everything(e);
    expect(text).not.toContain(CANARY);
    expect(text).not.toContain(ENCRYPTION_KEY);
    expect(text).not.toContain(B_VARIABLE);
    expect(text).not.toMatch(/DATABASE_URL|ENCRYPTION_KEY|REDIS_URL/);
  });

  it("17 the victim's workflow, execution and credential are 404 to the attacker's key (read, run, retry, stop, delete)", async () => {
    for (const [method, url] of [
      ['GET', `/api/v1/workflows/${bWorkflowId}`],
      ['POST', `/api/v1/workflows/${bWorkflowId}/run`],
      ['GET', `/api/v1/executions/${bExecutionId}?includeData=true`],
      ['POST', `/api/v1/executions/${bExecutionId}/retry`],
      ['POST', `/api/v1/executions/${bExecutionId}/stop`],
      ['DELETE', `/api/v1/executions/${bExecutionId}`],
      ['POST', `/api/v1/credentials/${bCredentialId}/test`],
      ['DELETE', `/api/v1/credentials/${bCredentialId}`],
    ] as const) {
      const res = await p.request({ method, url, key: keyA, ...(method === 'POST' ? { payload: {} } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.body).not.toContain(B_SECRET);
    }
    const list = await p.request({
      method: 'GET',
      url: `/api/v1/executions?workflowId=${bWorkflowId}&includeData=true`,
      key: keyA,
    });
    expect(list.body).not.toContain(bExecutionId);
    expect(list.body).not.toContain(B_SECRET);
  });

  it("18 the victim's credential cannot be used by id or by name (HTTP Request, inline sub-workflow)", async () => {
    const before = allowed.requests.length;
    for (const ref of [
      { id: bCredentialId, name: 'victim-cred' },
      { id: 'does-not-exist', name: 'victim-cred' },
      bCredentialId,
      'victim-cred',
    ]) {
      const node = {
        ...n8nNode('Fetch', 'httpRequest', 4.2, {
          url: `http://localhost:${allowed.port}/steal`,
          authentication: 'genericCredentialType',
          genericAuthType: 'httpHeaderAuth',
          options: {},
        }),
        credentials: { httpHeaderAuth: ref },
      };
      const res = await p.request({
        method: 'POST',
        url: '/api/v1/workflows',
        key: keyA,
        payload: chain('borrow', [trigger(), node]),
      });
      if (res.statusCode === 201) {
        const e = await runAs(keyA, (res.json() as { id: string }).id);
        expect(e.status, JSON.stringify(ref)).toBe('error');
      } else expect([400, 403, 404], JSON.stringify(ref)).toContain(res.statusCode);
    }
    const inline = JSON.stringify(
      chain('inline', [
        n8nNode('In', 'executeWorkflowTrigger', 1, {}),
        {
          ...n8nNode('Fetch', 'httpRequest', 4.2, {
            url: `http://localhost:${allowed.port}/steal-inline`,
            authentication: 'genericCredentialType',
            genericAuthType: 'httpHeaderAuth',
            options: {},
          }),
          credentials: { httpHeaderAuth: { id: bCredentialId, name: 'victim-cred' } },
        },
      ]),
    );
    const e = await attack([
      n8nNode('Call', 'executeWorkflow', 1.2, { source: 'parameter', workflowJson: inline, options: {} }),
    ]);
    expect(e.status).toBe('error');
    const seen = JSON.stringify(allowed.requests.slice(before));
    expect(seen).not.toContain(B_SECRET);
    expect(everything(e)).not.toContain(B_SECRET);
  });

  it("19 the victim's workflow cannot be called as a sub-workflow or named as the error workflow", async () => {
    const e = await attack([
      n8nNode('Call', 'executeWorkflow', 1.2, {
        workflowId: { __rl: true, value: bWorkflowId, mode: 'id' },
        options: {},
      }),
    ]);
    expect(e.status).toBe('error');
    expect(everything(e)).not.toContain(B_SECRET);
    const dyn = await attack([
      n8nNode('Call', 'executeWorkflow', 1.2, {
        workflowId: { __rl: true, value: `={{ "${bWorkflowId}" }}`, mode: 'id' },
        options: {},
      }),
    ]);
    expect(dyn.status).toBe('error');
    expect(everything(dyn)).not.toContain(B_SECRET);
    const before = await p.request({
      method: 'GET',
      url: `/api/v1/executions?workflowId=${bWorkflowId}`,
      key: victim.key,
    });
    const res = await p.request({
      method: 'POST',
      url: '/api/v1/workflows',
      key: keyA,
      payload: chain('errwf', [trigger(), code('throw new Error("x")')], { errorWorkflow: bWorkflowId }),
    });
    if (res.statusCode === 201) await runAs(keyA, (res.json() as { id: string }).id);
    const after = await p.request({
      method: 'GET',
      url: `/api/v1/executions?workflowId=${bWorkflowId}`,
      key: victim.key,
    });
    expect((after.json() as { data: unknown[] }).data.length).toBe(
      (before.json() as { data: unknown[] }).data.length,
    );
  });

  it('20 $getWorkflowStaticData is refused in Code and in the legacy Function node', async () => {
    const e = await attack([
      code("const d = $getWorkflowStaticData('global'); d.x = 1; return [{ json: d }];"),
    ]);
    expect(e.status).toBe('error');
    expect(errorOf(e)).toMatch(/not available/);
    const f = await attack([
      n8nNode('Fn', 'function', 1, {
        functionCode: "const d = getWorkflowStaticData('global'); return [{ json: { d } }];",
      }),
    ]);
    expect(f.status).toBe('error');
  });

  it("21 Read/Write Files from Disk stays in the caller's own folder (.., absolute paths, globs, /proc)", async () => {
    const victimFile = path.join(filesDir, victim.id, 'secret.txt');
    for (const selector of [
      `../${victim.id}/secret.txt`,
      victimFile,
      `../*/secret.txt`,
      `../**/secret.txt`,
      '/proc/self/environ',
      '/etc/passwd',
      `./../${victim.id}/*`,
      `/home/node/../${victim.id}/secret.txt`,
      `~/../${victim.id}/secret.txt`,
    ]) {
      const e = await attack([
        n8nNode('Read', 'readWriteFile', 1, { operation: 'read', fileSelector: selector, options: {} }),
      ]);
      const text = everything(e);
      expect(text, selector).not.toContain(Buffer.from(B_FILE_SECRET).toString('base64'));
      expect(text, selector).not.toContain(B_FILE_SECRET);
      expect(text, selector).not.toContain(Buffer.from(CANARY).toString('base64').slice(0, 12));
      expect(outputOf(e, 'Read').length, selector).toBe(0);
    }
    // Writing outside is refused too: the victim's file is unchanged.
    const write = await attack([
      code('return [{ json: {}, binary: { data: { data: btoa("overwritten"), mimeType: "text/plain" } } }];'),
      n8nNode('Write', 'readWriteFile', 1, {
        operation: 'write',
        fileName: `../${victim.id}/secret.txt`,
        options: {},
      }),
    ]);
    expect(write.status).toBe('error');
    const { readFile } = await import('node:fs/promises');
    expect(await readFile(victimFile, 'utf8')).toBe(B_FILE_SECRET);
  });

  it('22 the host nodes that are off (Execute Command, SSH) are refused at save', async () => {
    for (const node of [
      n8nNode('Cmd', 'executeCommand', 1, { command: 'env' }),
      {
        ...n8nNode('Ssh', 'ssh', 1, { command: 'env' }),
        credentials: { sshPassword: { id: 'x', name: 'x' } },
      },
    ]) {
      const res = await p.request({
        method: 'POST',
        url: '/api/v1/workflows',
        key: keyA,
        payload: chain('host', [trigger(), node]),
      });
      expect(res.statusCode, res.body).toBe(400);
    }
  });

  // ---------------------------------------------------------------- exfiltrate over the network

  it('23 HTTP Request: metadata, loopback and private addresses are refused in every spelling', async () => {
    const before = internal.requests.length;
    const port = internal.port;
    for (const url of [
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      `http://127.0.0.1:${port}/a`,
      `http://localhost:${port}/b`,
      `http://127.1:${port}/c`,
      `http://2130706433:${port}/d`,
      `http://0x7f000001:${port}/e`,
      `http://0177.0.0.1:${port}/f`,
      `http://[::1]:${port}/g`,
      `http://[::ffff:127.0.0.1]:${port}/h`,
      `http://[::ffff:7f00:1]:${port}/i`,
      `http://0.0.0.0:${port}/j`,
      `http://127.0.0.1.nip.io:${port}/k`,
      `http://LOCALHOST.:${port}/l`,
      `http://user@127.0.0.1:${port}/m`,
    ]) {
      const e = await attack([httpGet(url)]);
      expect(e.status, url).toBe('error');
      expect(everything(e), url).not.toContain('metadata-token-xyz');
    }
    expect(internal.requests.length).toBe(before);
  }, 120_000);

  it('24 HTTP Request: an allowed host redirecting to an internal address is refused at the hop', async () => {
    const before = internal.requests.length;
    const e = await attack([httpGet(`http://localhost:${allowed.port}/redirect`)]);
    expect(e.status, everything(e)).toBe('error');
    expect(internal.requests.length).toBe(before);
    expect(everything(e)).not.toContain('metadata-token-xyz');
  });

  it('25 HTTP Request: URLs built by expressions and pagination cannot reach internal addresses', async () => {
    const before = internal.requests.length;
    const e = await attack([
      n8nNode('Fetch', 'httpRequest', 4.2, {
        url: `={{ "http://127.0.0." + (0 + 1) + ":${internal.port}/expr" }}`,
        options: {},
      }),
    ]);
    expect(e.status).toBe('error');
    const paged = await attack([
      n8nNode('Fetch', 'httpRequest', 4.2, {
        url: `http://localhost:${allowed.port}/page`,
        options: {
          pagination: {
            pagination: {
              paginationMode: 'responseContainsNextURL',
              nextURL: `={{ "http://127.0.0.1:${internal.port}/paged" }}`,
              maxRequests: 3,
              limitPagesFetched: true,
            },
          },
        },
      }),
    ]);
    expect(paged.status).not.toBe('success');
    expect(internal.requests.length).toBe(before);
  });

  it("26 TCP clients (Redis, Postgres credentials) cannot reach loopback services, the platform's own stores included", async () => {
    const before = internal.connections;
    for (const [type, data] of [
      ['redis', { host: '127.0.0.1', port: String(internal.port) }],
      ['postgres', { host: 'localhost', port: String(internal.port), database: 'x', user: 'x' }],
      ['redis', { host: '127.0.0.1', port: '6379' }],
      ['postgres', { host: '127.0.0.1', port: '5432', database: 'test', user: 'postgres' }],
    ] as const) {
      const created = await p.request({
        method: 'POST',
        url: '/api/v1/credentials',
        key: keyA,
        payload: { name: `tcp-${randomBytes(3).toString('hex')}`, type, data },
      });
      expect(created.statusCode, created.body).toBe(201);
      const id = (created.json() as { id: string }).id;
      const test = await p.request({
        method: 'POST',
        url: `/api/v1/credentials/${id}/test`,
        key: keyA,
        payload: {},
      });
      expect(
        (test.json() as { status: string }).status,
        `${type} ${data.host}:${data.port}: ${test.body}`,
      ).toBe('Error');
      expect(test.body).toMatch(/not allowed|private|internal/i);
    }
    expect(internal.connections).toBe(before);
  });

  // ---------------------------------------------------------------- the platform's own origin

  // ---------------------------------------------------------------- host data structures

  it("29 __proto__ keys in webhook data flowing through host nodes never pollute the server's Object.prototype", async () => {
    const pathName = `audit-proto-${randomBytes(3).toString('hex')}`;
    const id = await createWorkflow(p, {
      name: 'proto',
      nodes: [
        n8nNode('Webhook', 'webhook', 2, {
          httpMethod: 'POST',
          path: pathName,
          responseMode: 'lastNode',
          responseData: 'allEntries',
          options: {},
        }),
        n8nNode('Split', 'splitOut', 1, {
          fieldToSplitOut: 'body.items',
          include: 'noOtherFields',
          options: {},
        }),
        n8nNode('Set', 'set', 3.4, {
          assignments: {
            assignments: [
              { id: 'a', name: '={{ "__pro" + "to__.pollutedBySet" }}', value: 'yes', type: 'string' },
            ],
          },
          includeOtherFields: true,
          options: {},
        }),
      ],
      connections: {
        Webhook: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
        Split: { main: [[{ node: 'Set', type: 'main', index: 0 }]] },
      },
    });
    const act = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate`, payload: {} });
    expect(act.statusCode, act.body).toBe(200);
    await p.app.inject({
      method: 'POST',
      url: `/webhook/${pathName}`,
      headers: { 'content-type': 'application/json' },
      payload:
        '{"items":[{"__proto__":{"polluted":"yes"}},{"constructor":{"prototype":{"polluted":"yes"}}}]}',
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).pollutedBySet).toBeUndefined();
    await victimStillFine();
  });

  // ---------------------------------------------------------------- Python

  it('30 Python: no server environment, host files, processes or sockets', async () => {
    const before = internal.connections;
    const e = await attack([
      python(`
import os, sys
out = {}
out["env"] = dict(os.environ)
def attempt(name, f):
    try:
        out[name] = "ok: " + str(f())[:200]
    except BaseException as err:
        out[name] = "refused: " + type(err).__name__
attempt("passwd", lambda: open("/etc/passwd").read())
attempt("environ", lambda: open("/proc/self/environ").read())
attempt("pkg", lambda: open(${JSON.stringify(path.join(process.cwd(), 'package.json'))}).read())
attempt("victim", lambda: open(${JSON.stringify(path.join(filesDir, victim.id, 'secret.txt'))}).read())
attempt("listdir", lambda: os.listdir(${JSON.stringify(filesDir)}))
def sock():
    import socket
    s = socket.create_connection(("127.0.0.1", ${internal.port}), timeout=2)
    s.sendall(b"GET /python HTTP/1.0\\r\\n\\r\\n")
    return s.recv(100)
attempt("socket", sock)
def sub():
    import subprocess
    return subprocess.run(["id"], capture_output=True).stdout
attempt("subprocess", sub)
attempt("system", lambda: os.system("id"))
def js():
    import js
    return js.process.env
attempt("js", js)
def pjs():
    import pyodide_js
    return pyodide_js
attempt("pyodide_js", pjs)
return [{"json": out}]`),
    ]);
    const text = everything(e);
    expect(text).not.toContain(CANARY);
    expect(text).not.toContain(ENCRYPTION_KEY);
    expect(text).not.toContain(B_FILE_SECRET);
    expect(text).not.toMatch(/root:x:0:0/);
    expect(text).not.toContain('"name": "api-platform"');
    if (e.status === 'success') {
      const [out] = outputOf(e, 'Code');
      for (const k of ['passwd', 'environ', 'pkg', 'victim', 'socket', 'subprocess', 'js', 'pyodide_js'])
        expect(String(out?.[k]), k).toMatch(/^refused/);
    }
    expect(internal.connections).toBe(before);
  }, 180_000);

  it('31 Python: the gc route to JavaScript objects yields no process, env or code generation', async () => {
    const e = await attack([
      python(`
import gc
found = []
for o in gc.get_objects():
    t = type(o).__name__
    if "Js" in t and t not in found:
        found.append(t)
res = {"types": found[:20]}
def attempt(name, f):
    try:
        res[name] = "ok: " + str(f())[:200]
    except BaseException as err:
        res[name] = "refused: " + type(err).__name__ + ": " + str(err)[:80]
proxies = [o for o in gc.get_objects() if type(o).__name__.startswith("Js")]
def probe():
    for p in proxies[:200]:
        try:
            ctor = p.constructor.constructor
            return ctor("return process.env.AUDIT_CANARY_SECRET")()
        except BaseException:
            continue
    return "none"
attempt("ctor", probe)
def glob():
    for p in proxies[:200]:
        try:
            return p.constructor.constructor("return globalThis.process.mainModule")()
        except BaseException:
            continue
    return "none"
attempt("glob", glob)
return [{"json": res}]`),
    ]);
    expect(e.status, everything(e)).toBe('success');
    const out = JSON.stringify(outputOf(e, 'Code'));
    expect(out).not.toContain(CANARY);
    const [res] = outputOf(e, 'Code');
    // Nothing came back from code generated out of a reached JavaScript object.
    for (const k of ['ctor', 'glob']) expect(String(res?.[k]), k).toMatch(/^ok: none$|^refused/);
  }, 180_000);

  it("32 Python: module state planted by account A is not seen by account B's run", async () => {
    const plant = await attack([
      python(`
import builtins, json, os
builtins.audit_planted = "from-A"
json.audit_planted = "from-A"
os.environ["AUDIT_PLANTED"] = "from-A"
return [{"json": {"planted": True}}]`),
    ]);
    expect(plant.status, everything(plant)).toBe('success');
    const read = await attack(
      [
        python(`
import builtins, json, os
return [{"json": {"b": getattr(builtins, "audit_planted", None), "j": getattr(json, "audit_planted", None), "e": os.environ.get("AUDIT_PLANTED")}}]`),
      ],
      victim.key,
    );
    expect(read.status, everything(read)).toBe('success');
    expect(outputOf(read, 'Code')).toEqual([{ b: null, j: null, e: null }]);
  }, 180_000);

  // ---------------------------------------------------------------- CPU on the server's own thread

  it('34 Compare Datasets over two large inputs matches them through an index (no n x m on the main thread)', async () => {
    const n = 4_000;
    const def = {
      name: 'compare big',
      nodes: [
        trigger(),
        n8nNode('A', 'code', 2, {
          jsCode: `return Array.from({ length: ${n} }, (_, i) => ({ json: { k: i } }));`,
        }),
        n8nNode('B', 'code', 2, {
          jsCode: `return Array.from({ length: ${n} }, (_, i) => ({ json: { k: -1 - i } }));`,
        }),
        n8nNode('Compare', 'compareDatasets', 2.3, {
          mergeByFields: { values: [{ field1: 'k', field2: 'k' }] },
          options: {},
        }),
      ],
      connections: {
        Start: {
          main: [
            [
              { node: 'A', type: 'main', index: 0 },
              { node: 'B', type: 'main', index: 0 },
            ],
          ],
        },
        A: { main: [[{ node: 'Compare', type: 'main', index: 0 }]] },
        B: { main: [[{ node: 'Compare', type: 'main', index: 1 }]] },
      },
    };
    const id = await createWorkflow(p, def);
    const e = await runAs(keyA, id);
    // Matched by an index of input B (linear), not n x m on the main thread: the outputs are the loop's.
    expect(e.status, errorOf(e)).toBe('success');
    const outputs = e.data?.resultData.runData.Compare?.[0]?.data?.main ?? [];
    expect(outputs.map((o) => o.length)).toEqual([n, 0, 0, n]);
  }, 300_000);

  it('36 Code: a console flood is bounded in the execution record', async () => {
    // 100 MB of lines, fifty times the bound: a flood, and well inside the node's 3 s on a busy machine
    // (500 MB took most of them, and failed the run when CI's other jobs slowed it).
    const e = await attack([
      code(
        "for (let i = 0; i < 20000; i++) console.log('x'.repeat(5000)); return [{ json: { done: true } }];",
      ),
    ]);
    expect(e.status, errorOf(e)).toBe('success');
    expect(everything(e).length).toBeLessThan(2_000_000);
  });
});
