import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackListeners } from '../../../../../../test/helpers/loopback-listeners.js';
import { checkParameters } from '../../../engine/parameters.js';
import { closePythonSandbox, configurePythonSandbox } from '../../../engine/python/run-python.js';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { HostAccess, Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

// Real CPython (Pyodide) in worker threads: one interpreter per account, loaded once for this file.
configurePythonSandbox({ workers: 3, memoryMb: 128 });
// Python is off unless the instance turns it on (WORKFLOW_PYTHON_ENABLED): these engines have it on.
const pythonOn: HostAccess = {
  filesDir: null,
  executeCommand: { enabled: false, timeoutMs: 1_000, maxOutputBytes: 1_024 },
  ssh: { enabled: false, timeoutMs: 1_000, maxOutputBytes: 1_024 },
  python: { enabled: true },
  tcpTarget: async () => {
    throw new Error('no TCP here');
  },
};
const engineFor = (tenant: string, codeTimeoutMs = 20_000) =>
  new WorkflowEngine(testDeps({ codeTimeoutMs, tenant, host: pythonOn }), defaultNodeRegistry);
const engine = engineFor('acct_a');

const MARKER = join(tmpdir(), `python-sandbox-${process.pid}-marker`);
const start = { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 };
const items: Item[] = [{ json: { name: 'ada', n: 1 } }, { json: { name: 'grace', n: 2 } }];

function pyFlow(pythonCode: string, mode?: string, language = 'python') {
  return workflow(
    [
      start,
      { name: 'Earlier', type: 'n8n-nodes-base.noOp', typeVersion: 1 },
      {
        name: 'Code',
        type: 'n8n-nodes-base.code',
        typeVersion: 2,
        parameters: { language, pythonCode, ...(mode ? { mode } : {}) },
      },
    ],
    [
      ['Start', 'Earlier'],
      ['Earlier', 'Code'],
    ],
  );
}

const run = (code: string, mode?: string, on = engine, language = 'python') =>
  on.run(pyFlow(code, mode, language), { nodeName: 'Start', items }, ctx);

beforeAll(async () => {
  // Loading an interpreter takes seconds: the first run waits for it.
  const out = await run('return []');
  expect(out.state.error).toBeNull();
}, 180_000);

afterAll(async () => {
  await closePythonSandbox();
});

describe('n8n Code node (Python)', () => {
  it('is off unless the instance turns it on: refused at save and at run, naming the setting', async () => {
    const off = new WorkflowEngine(testDeps({ tenant: 'acct_off' }), defaultNodeRegistry);
    const def = pyFlow('return [{"a": 1}]');
    expect(off.validate(def)).toEqual([
      {
        path: expect.stringMatching(/parameters\.language$/),
        message: expect.stringMatching(/WORKFLOW_PYTHON_ENABLED=true/),
      },
    ]);
    const run = await off.run(def, { nodeName: 'Start', items }, ctx);
    expect(run.state.error?.message).toMatch(/Python in the Code node is off on this instance/);
  });

  it("runs once for all items with n8n's Pyodide names: _input.all(), attribute and key access, to_py()", async () => {
    const out = await run(
      [
        'out = []',
        'for item in _input.all():',
        '  item.json.upper = item.json.name.upper()',
        '  out.append({"json": {**item.json.to_py(), "twice": item.json["n"] * 2}})',
        'return out',
      ].join('\n'),
    );
    expect(out.state.error).toBeNull();
    expect(jsonOf(out.state, 'Code')).toEqual([
      { name: 'ada', n: 1, upper: 'ADA', twice: 2 },
      { name: 'grace', n: 2, upper: 'GRACE', twice: 4 },
    ]);
    // n8n's default code: mutate the items and return them; bare dicts are wrapped; None is no items.
    const mutated = await run('for item in _input.all():\n  item.json.myNewField = 1\nreturn _input.all()');
    expect(jsonOf(mutated.state, 'Code')).toEqual([
      { name: 'ada', n: 1, myNewField: 1 },
      { name: 'grace', n: 2, myNewField: 1 },
    ]);
    expect(jsonOf((await run('return {"count": len(_input.all())}')).state, 'Code')).toEqual([{ count: 2 }]);
    expect(jsonOf((await run('x = 1')).state, 'Code')).toEqual([]);
  });

  it('runs once for each item: _json, _input.item, _itemIndex', async () => {
    const out = await run(
      'return {"i": _itemIndex, "name": _json.name, "same": _input.item.json.n == _json["n"]}',
      'runOnceForEachItem',
    );
    expect(jsonOf(out.state, 'Code')).toEqual([
      { i: 0, name: 'ada', same: true },
      { i: 1, name: 'grace', same: true },
    ]);
  });

  it("reads other nodes and n8n's variables: _('Node'), _input.first()/last(), _workflow, _execution, _now, _today, _prevNode", async () => {
    const out = await run(
      [
        'return {',
        '  "earlier": len(_("Earlier").all()),',
        '  "first": _("Earlier").first().json.name,',
        '  "last": _input.last().json.name,',
        '  "wf": _workflow.name,',
        '  "exec": _execution.id,',
        '  "now": _now.toISODate(),',
        '  "today": _today.toISO()[:10],',
        '  "prev": _prevNode.name,',
        '  "mode": _mode,',
        '  "year": _now.year,',
        '}',
      ].join('\n'),
    );
    expect(out.state.error).toBeNull();
    expect(jsonOf(out.state, 'Code')).toEqual([
      {
        earlier: 2,
        first: 'ada',
        last: 'grace',
        wf: 'Test',
        exec: 'exec_1',
        now: '2030-01-02',
        today: '2030-01-02',
        prev: 'Earlier',
        mode: 'manual',
        year: 2030,
      },
    ]);
    const missing = await run('return _("Nowhere").first()');
    expect(missing.state.error?.message).toMatch(/Referenced node doesn't exist/);
  });

  it("pythonNative: n8n 2's names (_items, _item) with plain dicts", async () => {
    const all = await run(
      'return [{"json": {"name": i["json"]["name"].title()}} for i in _items]',
      undefined,
      engine,
      'pythonNative',
    );
    expect(jsonOf(all.state, 'Code')).toEqual([{ name: 'Ada' }, { name: 'Grace' }]);
    const each = await run(
      'if _item["json"]["n"] == 1:\n  return None\nreturn {"json": {"n": _item["json"]["n"] * 10}}',
      'runOnceForEachItem',
      engine,
      'pythonNative',
    );
    expect(jsonOf(each.state, 'Code')).toEqual([{ n: 20 }]);
  });

  it("`from js import …`: Python stand-ins for the JavaScript globals n8n templates use, nothing of the host's", async () => {
    const out = await run(
      [
        'from js import Object, JSON, btoa, atob',
        'import js',
        'first = _input.first().json',
        'return {"keys": list(Object.keys(first)), "text": JSON.stringify(first), "b64": btoa("hi"), "back": atob("aGk="),',
        '        "names": sorted(n for n in dir(js) if not n.startswith("_"))}',
      ].join('\n'),
    );
    expect(out.state.error).toBeNull();
    expect(jsonOf(out.state, 'Code')).toEqual([
      {
        keys: ['name', 'n'],
        text: '{"name":"ada","n":1}',
        b64: 'aGk=',
        back: 'hi',
        names: ['JSON', 'Object', 'atob', 'btoa', 'console'],
      },
    ]);
    // pythonNative has no js module at all, as n8n 2's runner.
    const native = await run('import js\nreturn {}', undefined, engine, 'pythonNative');
    expect(native.state.error?.message).toMatch(/No module named 'js'/);
  });

  it('keeps print() output in the run data; the standard library is there', async () => {
    const out = await run(
      'import json, re, hashlib, datetime, math\nprint("hello", 1)\nreturn {"h": hashlib.sha256(b"x").hexdigest()[:8], "m": re.sub(r"a", "o", "banana"), "s": math.sqrt(16)}',
    );
    expect(out.state.runData.Code?.[0]?.logs).toEqual([{ level: 'log', message: 'hello 1' }]);
    expect(jsonOf(out.state, 'Code')).toEqual([{ h: '2d711642', m: 'bonono', s: 4 }]);
  });

  it('errors: a syntax error, an exception with its line, a wrong return, as clear node errors', async () => {
    const syntax = await run('return {');
    expect(syntax.status).toBe('error');
    expect(syntax.state.error?.message).toMatch(/^SyntaxError: .*\(line 1\)/);
    const thrown = await run('x = 1\nraise ValueError("nope")');
    expect(thrown.state.error).toMatchObject({ message: 'ValueError: nope (line 2)', node: 'Code' });
    const name = await run('return undefined_name');
    expect(name.state.error?.message).toMatch(/NameError: name 'undefined_name' is not defined/);
    const bad = await run('print("before")\nreturn [1, 2]');
    expect(bad.state.error?.message).toMatch(/isn't a dictionary/);
    expect(bad.state.runData.Code?.[0]?.logs).toEqual([{ level: 'log', message: 'before' }]);
    const each = await run('return [{"a": 1}]', 'runOnceForEachItem');
    expect(each.state.error?.message).toMatch(/doesn't return a single dictionary.*\[item 0\]/);
    const notJson = await run('return {"o": object()}');
    expect(notJson.state.error?.message).toMatch(/no JSON form/);
  });

  it.each([
    [
      'the js stand-in',
      'import js, types\nreturn {"k": [type(getattr(js, n)).__name__ for n in ("btoa", "JSON")]}',
      null,
    ],
    ['import pyodide_js', 'import pyodide_js\nreturn {}', /No module named 'pyodide_js'/],
    ['pyodide.ffi', 'from pyodide.ffi import to_js\nreturn {}', /No module named 'pyodide/],
    [
      "Pyodide's core module, the import hook removed",
      'import sys\nsys.meta_path[:] = [f for f in sys.meta_path if "Refuse" not in repr(f)]\nimport _pyodide_core\nreturn {"o": repr(_pyodide_core.to_js({}))}',
      /No module named '_pyodide_core'/,
    ],
    [
      'the import hook removed',
      'import sys\nsys.meta_path[:] = [f for f in sys.meta_path if "Refuse" not in repr(f)]\nsys.modules.pop("js", None)\nimport js\nreturn {"k": str(dir(js))}',
      /No module named 'js'/,
    ],
    ['the host filesystem', 'return {"p": open("/etc/passwd").read()}', /FileNotFoundError/],
    ['a directory listing', 'import os\nreturn {"l": os.listdir("/")}', null],
    [
      'the network',
      'import urllib.request\nreturn {"r": urllib.request.urlopen("http://127.0.0.1:1").read()}',
      /Error|Remote/,
    ],
    ['a subprocess', 'import subprocess\nreturn {"r": subprocess.run(["ls"]).returncode}', /Error/],
    ['os.system', `import os\nreturn {"r": os.system("touch ${MARKER}")}`, /not available/],
    [
      'posix.system restored',
      `import importlib, posix\nposix = importlib.reload(posix)\nreturn {"r": posix.system("touch ${MARKER}")}`,
      null,
    ],
    [
      'a listening socket',
      'import socket\ns = socket.socket()\ns.bind(("127.0.0.1", 0))\ns.listen()\nreturn {"l": s.getsockname()}',
      /Error|not available/,
    ],
  ])('%s does not reach the host', async (what, code, message) => {
    const out = await run(code);
    if (message) {
      expect(out.status).toBe('error');
      expect(out.state.error?.message).toMatch(message);
    } else if (what === 'the js stand-in') {
      // Python functions and namespaces, not proxies of JavaScript objects.
      expect(jsonOf(out.state, 'Code')).toEqual([{ k: ['function', 'SimpleNamespace'] }]);
    } else if (what !== 'a directory listing') {
      // However it is reached, the shell command does not run on the host.
      expect(existsSync(MARKER)).toBe(false);
    } else {
      // The interpreter's own in-memory filesystem: nothing of the host's.
      const [{ l }] = jsonOf(out.state, 'Code') as [{ l: string[] }];
      expect(l).not.toContain('etc');
      expect(l).not.toContain('work');
      expect(what).toBe('a directory listing');
    }
  });

  it("the environment is the interpreter's, not the server's", async () => {
    process.env.PYTHON_TEST_SECRET = 'leak';
    const out = await run('import os\nreturn {"env": dict(os.environ)}');
    const [{ env }] = jsonOf(out.state, 'Code') as [{ env: Record<string, string> }];
    expect(Object.values(env)).not.toContain('leak');
    expect(Object.keys(env)).not.toContain('PATH_INFO');
    expect(env.HOME).toBe('/home/pyodide');
    delete process.env.PYTHON_TEST_SECRET;
  });

  it('a JavaScript object reached through the interpreter cannot run code on the host', async () => {
    // Should Python ever hold a JavaScript object, no JavaScript can be made from a string in the worker.
    const out = await run(
      [
        'import gc',
        'found = [o for o in gc.get_objects() if type(o).__name__.startswith("Js")]',
        'for o in found:',
        '  try:',
        '    f = o.constructor.constructor("return process.env")',
        '    return {"escaped": str(f())}',
        '  except Exception as e:',
        '    pass',
        'return {"escaped": None, "checked": len(found)}',
      ].join('\n'),
    );
    expect(out.state.error).toBeNull();
    expect(jsonOf(out.state, 'Code')[0]).toMatchObject({ escaped: null });
  });

  it("Pyodide's leftover JavaScript objects, found through gc, reach neither the host's files, the network nor a name server", async () => {
    // The security review's route: JsProxy objects left in Pyodide's internals, reached through `gc`,
    // lead to Pyodide's loadBinaryFile (Node's fs, fetch) and useNodeSockFS (node:net). The process they
    // live in may read only Pyodide's files, has no sockets and no name resolution, and (on Linux) sits in
    // a network namespace of its own. Python's own routes are tried too: a socket, a datagram to a name
    // server, name resolution.
    const net = await loopbackListeners();
    const port = net.tcpPort;
    try {
      const out = await run(
        [
          'import gc',
          'found = []',
          'for o in gc.get_objects():',
          '  for r in [o] + (list(o.values()) if isinstance(o, dict) else []):',
          '    if type(r).__name__.startswith("Js") and all(r is not f for f in found):',
          '      found.append(r)',
          'read = []',
          'for o in found:',
          '  for path in (("loadBinaryFile",), ("_api", "loadBinaryFile"), ("_module", "API", "loadBinaryFile")):',
          '    try:',
          '      f = o',
          '      for p in path:',
          '        f = getattr(f, p)',
          '      read.append(str(f("/etc/passwd"))[:40])',
          `      read.append(str(f("http://127.0.0.1:${port}/"))[:40])`,
          '    except BaseException as e:',
          '      pass',
          '  for path in (("useNodeSockFS",), ("_api", "useNodeSockFS"), ("_module", "API", "useNodeSockFS")):',
          '    try:',
          '      f = o',
          '      for p in path:',
          '        f = getattr(f, p)',
          '      f()',
          '    except BaseException:',
          '      pass',
          'import socket',
          'tries = {}',
          'def attempt(name, f):',
          '  try:',
          '    tries[name] = repr(f())[:60]',
          '  except BaseException as e:',
          '    tries[name] = "refused: " + type(e).__name__',
          `attempt("tcp", lambda: socket.create_connection(("127.0.0.1", ${port}), timeout=1))`,
          `attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"\\x00\\x01", ("127.0.0.1", ${net.dnsPort})))`,
          'attempt("gethostbyname", lambda: socket.gethostbyname("localhost"))',
          `attempt("resolved", lambda: socket.create_connection(socket.getaddrinfo("localhost", ${port})[0][4], timeout=1))`,
          'return {"read": read, "found": len(found), "tries": tries}',
        ].join('\n'),
      );
      expect(JSON.stringify(out.state.runData.Code?.[0] ?? out.state.error)).not.toMatch(/root:/);
      const [{ tries }] = jsonOf(out.state, 'Code') as [{ tries: Record<string, string> }];
      expect(tries.tcp).toMatch(/^refused/);
      expect(tries.resolved).toMatch(/^refused/);
      // Emscripten's resolver answers made-up addresses (172.29.x.x) and asks no name server.
      expect(tries.gethostbyname).not.toMatch(/127\.0\.0\.1/);
      expect(net.seen()).toEqual({ connections: 0, datagrams: 0 });
    } finally {
      await net.close();
    }
  }, 60_000);

  it("one account's module state and globals are not seen by another account", async () => {
    const a = await run('import json\njson.shared_secret = "from A"\nglobal leaked\nleaked = 42\nreturn {}');
    expect(a.state.error).toBeNull();
    const sameAccount = await run('return {"g": "leaked" in globals()}');
    expect(jsonOf(sameAccount.state, 'Code')).toEqual([{ g: false }]);
    const b = await run(
      'import json\nreturn {"secret": getattr(json, "shared_secret", None), "g": "leaked" in globals()}',
      undefined,
      engineFor('acct_b'),
    );
    expect(b.state.error).toBeNull();
    expect(jsonOf(b.state, 'Code')).toEqual([{ secret: null, g: false }]);
  }, 180_000);

  it('an infinite loop is stopped at the timeout, and the next run works', async () => {
    const tight = engineFor('acct_a', 1_500);
    const t0 = Date.now();
    const out = await run('while True:\n  pass', undefined, tight);
    expect(out.status).toBe('error');
    expect(out.state.error?.message).toMatch(/took longer than 1500 ms/);
    expect(Date.now() - t0).toBeLessThan(10_000);
    const next = await run('return {"ok": True}', undefined, engineFor('acct_a'));
    expect(jsonOf(next.state, 'Code')).toEqual([{ ok: true }]);
  }, 180_000);

  it('a memory bomb fails its own run with MemoryError, and the next run works', async () => {
    const out = await run('a = []\nwhile True:\n  a.append(bytearray(10_000_000))');
    expect(out.status).toBe('error');
    expect(out.state.error?.message).toMatch(/MemoryError/);
    const next = await run('return {"ok": True}');
    expect(jsonOf(next.state, 'Code')).toEqual([{ ok: true }]);
  }, 60_000);

  it('a run that leaves work scheduled (an asyncio callback) answers, says so, and its interpreter is replaced', async () => {
    const out = await run(
      'import asyncio\nasyncio.get_event_loop().call_later(30, print, "late")\nreturn {"answered": True}',
    );
    expect(out.state.error).toBeNull();
    expect(jsonOf(out.state, 'Code')).toEqual([{ answered: true }]);
    expect(out.state.runData.Code?.[0]?.logs).toEqual([
      { level: 'warn', message: expect.stringMatching(/left work scheduled.*interpreter was replaced/) },
    ]);
    const next = await run('return {"ok": True}');
    expect(jsonOf(next.state, 'Code')).toEqual([{ ok: true }]);
    // A thread cannot be started to outlive the run either.
    const thread = await run('import threading\nthreading.Thread(target=print).start()\nreturn {}');
    expect(thread.state.error?.message).toMatch(/RuntimeError: can't start new thread/);
  }, 180_000);

  // User code shares the interpreter with the code that writes the answer, so it can forge the answer
  // (here by replacing json.dumps, which the answer is written with): the host reads it as untrusted.
  const forged = engineFor('acct_forger');
  const forge = (text: string) =>
    run(`import json\njson.dumps = lambda *a, **k: ${text}\nreturn {}`, undefined, forged);
  it.each([
    ['text that is not JSON', '"[1, 2"', /answer could not be read: it is not JSON/],
    ['no answer at all (not text)', '42', /gave no answer/],
    ['a list, not an answer', '"[1]"', /it is not an answer/],
    ['items that are not a list', '\'{"ok": true, "items": "x"}\'', /it has no list of items/],
    ['an item without json', '\'{"ok": true, "items": [{"nojson": 1}]}\'', /item 0 has no 'json' dictionary/],
    ['json that is a list', '\'{"ok": true, "items": [{"json": [1]}]}\'', /item 0 has no 'json' dictionary/],
    [
      'a malformed binary entry',
      '\'{"ok": true, "items": [{"json": {}, "binary": {"f": {"data": 1}}}]}\'',
      /item 0\.binary\.f needs 'data' and 'mimeType' strings/,
    ],
    [
      'a pairing past the input',
      '\'{"ok": true, "items": [{"json": {}, "pairedItem": {"item": 99}}]}\'',
      /item 0\.pairedItem points past the input items/,
    ],
    ['an error without a message', '\'{"ok": false}\'', /its error has no message/],
    [
      'items nested 200 deep',
      "'{\"ok\": true, \"items\": [{\"json\": ' + '{\"a\": ' * 200 + '1' + '}' * 200 + '}]}'",
      /nest deeper than 128 levels/,
    ],
  ])(
    'a forged answer (%s) fails the node with a clear message',
    async (_what, text, message) => {
      const out = await forge(text);
      expect(out.status).toBe('error');
      expect(out.state.error).toMatchObject({ message: expect.stringMatching(message), node: 'Code' });
    },
    180_000,
  );

  it('a forged answer keeps only what an item holds; an error names an item only within the input', async () => {
    const extra = await forge(
      '\'{"ok": true, "items": [{"json": {"a": 1}, "evil": 2, "pairedItem": {"item": 1}}]}\'',
    );
    expect(extra.state.error).toBeNull();
    const [item] = extra.state.runData.Code?.[0]?.output[0] ?? [];
    expect(item?.json).toEqual({ a: 1 });
    expect(Object.keys(item ?? {})).not.toContain('evil');
    const far = await run(
      'import json\njson.dumps = lambda *a, **k: \'{"ok": false, "message": "boom", "itemIndex": 1000}\'\nreturn {}',
      'runOnceForEachItem',
      forged,
    );
    expect(far.state.error?.message).toBe('boom');
    // A json.dumps that raises even for the error answer: the interpreter fails, a node error says so.
    const raising = await run(
      'import json\ndef boom(*a, **k):\n  raise SystemExit(3)\njson.dumps = boom\nreturn {}',
      undefined,
      forged,
    );
    expect(raising.state.error?.message).toMatch(/the Python interpreter failed/);
  }, 180_000);

  it('accepts python and pythonNative at save time, and still refuses unknown parameters', () => {
    const codeType = defaultNodeRegistry.get('n8n-nodes-base.code', 2);
    if (!codeType) throw new Error('no code node');
    for (const language of ['python', 'pythonNative'])
      expect(checkParameters(codeType.schema, { language, pythonCode: 'return []' }, 'p', true)).toEqual([]);
    expect(checkParameters(codeType.schema, { language: 'ruby' }, 'p', true)).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: 'p.language' })]),
    );
  });

  // The `Examples` node of n8n's own Python test workflow (packages/nodes-base/nodes/Code/test/
  // Code.python.json, n8n-io/n8n, Sustainable Use License; used as test data): each Python expression
  // must give what its JavaScript twin gives, pairedItem ignored as n8n's harness ignores it. Where this
  // platform's JavaScript lacks the name (`$mode`, `.pairedItem()`) or differs from n8n (`.context` of a
  // node without any is undefined here, `{}` in n8n), the Python value is compared with n8n's.
  const N8N_EXAMPLES: Array<[string, string | { expected: unknown[] }]> = [
    ['_input.first()', '$input.first()'],
    ['_input.first().json.name', '$input.first().json.name'],
    ['_input.item', "$input['item']"],
    ['_input.last()', '$input.last()'],
    ['_input.all()', '$input.all()'],
    ["_('Start').params", "$('Start').params"],
    ["_('Start').context", { expected: [{ data: {} }, { data: {} }] }],
    ["_('Start').item", "$('Start')['item']"],
    ["_('Start').first()", "$('Start').first()"],
    ["_('Start').pairedItem()", { expected: items.map((item) => ({ data: { json: item.json } })) }],
    ["_('Start').itemMatching(0)", "$('Start').itemMatching(0)"],
    ["_('Start').itemMatching(1)", "$('Start').itemMatching(1)"],
    ["_('Start').first().json.name", "$('Start').first().json.name"],
    ["_('Start').last()", "$('Start').last()"],
    ["_('Start').all()", "$('Start').all()"],
    ['_mode', { expected: [{ data: 'manual' }, { data: 'manual' }] }],
    ['_runIndex', '$runIndex'],
    ['_today', '$today'],
  ];

  const withoutPairing = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(withoutPairing)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value)
              .filter(([k]) => k !== 'pairedItem')
              .map(([k, v]) => [k, withoutPairing(v)]),
          )
        : value;

  it.each(N8N_EXAMPLES)("n8n's example %s gives what %s gives", async (python, javaScript) => {
    const py = await run(`return { "data": ${python} }`, 'runOnceForEachItem');
    expect(py.state.error).toBeNull();
    if (typeof javaScript !== 'string') {
      expect(withoutPairing(jsonOf(py.state, 'Code'))).toEqual(javaScript.expected);
      return;
    }
    const js = await engine.run(
      workflow(
        [
          start,
          { name: 'Earlier', type: 'n8n-nodes-base.noOp', typeVersion: 1 },
          {
            name: 'Code',
            type: 'n8n-nodes-base.code',
            typeVersion: 2,
            parameters: { jsCode: `return { data: ${javaScript} }`, mode: 'runOnceForEachItem' },
          },
        ],
        [
          ['Start', 'Earlier'],
          ['Earlier', 'Code'],
        ],
      ),
      { nodeName: 'Start', items },
      ctx,
    );
    expect(js.state.error).toBeNull();
    expect(withoutPairing(jsonOf(py.state, 'Code'))).toEqual(withoutPairing(jsonOf(js.state, 'Code')));
  });
});
