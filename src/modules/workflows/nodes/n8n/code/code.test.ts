import { describe, expect, it } from 'vitest';
import { checkParameters } from '../../../engine/parameters.js';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps({ codeTimeoutMs: 2_000 }), defaultNodeRegistry);
const tight = new WorkflowEngine(testDeps({ codeTimeoutMs: 300 }), defaultNodeRegistry);

const start = { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 };
const items: Item[] = [{ json: { name: 'ada', n: 1 } }, { json: { name: 'grace', n: 2 } }];

function codeFlow(jsCode: string, mode?: string) {
  return workflow(
    [
      start,
      { name: 'Earlier', type: 'n8n-nodes-base.noOp', typeVersion: 1 },
      {
        name: 'Code',
        type: 'n8n-nodes-base.code',
        typeVersion: 2,
        parameters: { jsCode, ...(mode ? { mode } : {}) },
      },
    ],
    [
      ['Start', 'Earlier'],
      ['Earlier', 'Code'],
    ],
  );
}

const run = (jsCode: string, mode?: string, on = engine) =>
  on.run(codeFlow(jsCode, mode), { nodeName: 'Start', items }, ctx);

describe('n8n Code node (JavaScript)', () => {
  it('runs once for all items: $input.all(), items, and n8n return forms', async () => {
    const out = await run(
      'return $input.all().map((item) => ({ json: { ...item.json, upper: item.json.name.toUpperCase() } }));',
    );
    expect(out.status).toBe('success');
    expect(jsonOf(out.state, 'Code')).toEqual([
      { name: 'ada', n: 1, upper: 'ADA' },
      { name: 'grace', n: 2, upper: 'GRACE' },
    ]);
    // Bare objects are wrapped as items; one object is one item; nothing is no items.
    expect(jsonOf((await run('return items.map((i) => ({ total: i.json.n * 10 }));')).state, 'Code')).toEqual(
      [{ total: 10 }, { total: 20 }],
    );
    expect(jsonOf((await run('return { count: $input.all().length };')).state, 'Code')).toEqual([
      { count: 2 },
    ]);
    expect(jsonOf((await run('return [];')).state, 'Code')).toEqual([]);
  });

  it('code may declare its own `items`, `item` or `$json` (they shadow n8n’s, as in n8n; templates do this)', async () => {
    const all = await run(
      'const items = $input.all();\nconst item = items[0];\nreturn { json: { first: item.json.name } };',
    );
    expect(all.state.error).toBeNull();
    expect(jsonOf(all.state, 'Code')).toEqual([{ first: 'ada' }]);
    const each = await run('let $json = { renamed: true };\nreturn { json: $json };', 'runOnceForEachItem');
    expect(jsonOf(each.state, 'Code')).toEqual([{ renamed: true }, { renamed: true }]);
  });

  it('runs once for each item: $json, $input.item, $itemIndex; async code awaits', async () => {
    const out = await run(
      'await Promise.resolve(); return { json: { i: $itemIndex, name: $json.name, same: $input.item.json.n === item.json.n } };',
      'runOnceForEachItem',
    );
    expect(jsonOf(out.state, 'Code')).toEqual([
      { i: 0, name: 'ada', same: true },
      { i: 1, name: 'grace', same: true },
    ]);
  });

  it("reads other nodes, n8n's variables and Luxon", async () => {
    const out = await run(
      'return { earlier: $("Earlier").all().length, node: $node["Earlier"].json.name, wf: $workflow.name, now: $now.toISODate(), env: $env.PUBLIC_NAME, sum: [1, 2].sum() };',
    );
    expect(jsonOf(out.state, 'Code')).toEqual([
      { earlier: 2, node: 'ada', wf: 'Test', now: '2030-01-02', env: 'platform', sum: 3 },
    ]);
  });

  it('keeps console output in the run data, bounded', async () => {
    const out = await run('console.log("hello", { a: 1 }); console.warn("careful"); return [];');
    expect(out.state.runData.Code?.[0]?.logs).toEqual([
      { level: 'log', message: 'hello {"a":1}' },
      { level: 'warn', message: 'careful' },
    ]);
    const many = await run('for (let i = 0; i < 10000; i++) console.log(i); return [];');
    expect(many.state.runData.Code?.[0]?.logs).toHaveLength(200);
  });

  it("refuses returns n8n refuses, with n8n's reasons, and keeps the logs up to the failure", async () => {
    const bad = await run('console.log("before"); return [1, 2];');
    expect(bad.status).toBe('error');
    expect(bad.state.error?.message).toMatch(/isn't an object/);
    expect(bad.state.runData.Code?.[0]?.logs).toEqual([{ level: 'log', message: 'before' }]);
    const array = await run('return [{ a: 1 }];', 'runOnceForEachItem');
    expect(array.state.error?.message).toMatch(/doesn't return a single object.*\[item 0\]/);
    const json = await run('return { json: 5 };');
    expect(json.state.error?.message).toMatch(/'json' property isn't an object/);
    const thrown = await run('throw new Error("nope");');
    expect(thrown.state.error).toMatchObject({ message: 'nope', node: 'Code' });
    const syntax = await run('return {;');
    expect(syntax.state.error?.message).toMatch(/SyntaxError|expecting|unexpected/i);
  });

  it.each([
    ['require', 'return { fs: typeof require("fs") };', /require is not available/],
    ['process', 'return { env: process.env };', /process' is not defined|process is not defined/],
    ['a constructor escape', 'return { p: (() => {}).constructor("return process")() };', /not defined/],
    ['fetch', 'return { r: await fetch("http://127.0.0.1") };', /not defined/],
    ['static data', 'return $getWorkflowStaticData("global");', /not available/],
  ])('%s cannot reach the host', async (_what, code, message) => {
    const out = await run(code);
    expect(out.status).toBe('error');
    expect(out.state.error?.message).toMatch(message);
  });

  it.each([
    ['an infinite loop', 'while (true) {}'],
    ['an allocation bomb', 'const a = []; for (;;) a.push("x".repeat(1e6));'],
    ['deep recursion', 'const f = (n) => f(n + 1) + 1; return f(0);'],
    ['a promise that never settles', 'await new Promise(() => {}); return [];'],
  ])('%s fails its own node, and the next run works', async (_what, code) => {
    const out = await run(code, undefined, tight);
    expect(out.status).toBe('error');
    expect(out.state.error?.message).toMatch(/took longer than|memory|too deeply|did not settle/);
    const next = await run('return { ok: true };', undefined, tight);
    expect(jsonOf(next.state, 'Code')).toEqual([{ ok: true }]);
  });

  it('a prototype change in one run is not seen by the next', async () => {
    await run('try { Array.prototype.map = () => "pwned"; } catch {} Object.prototype.evil = 1; return [];');
    const out = await run('return { m: [1].map((x) => x + 1), evil: ({}).evil ?? null };');
    expect(jsonOf(out.state, 'Code')).toEqual([{ m: [2], evil: null }]);
  });

  it('refuses an unknown language and unknown parameters at save time (Python: python.test.ts)', () => {
    const codeType = defaultNodeRegistry.get('n8n-nodes-base.code', 2);
    if (!codeType) throw new Error('no code node');
    expect(checkParameters(codeType.schema, { language: 'ruby', pythonCode: 'x' }, 'p', true)).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: 'p.language' })]),
    );
    expect(checkParameters(codeType.schema, { jsCode: 'return []', bogus: 1 }, 'p', true)).toEqual([
      { path: 'p.bogus', message: 'is not a parameter of this node type and version' },
    ]);
  });
});
