import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ExpressionData, ExpressionError, ExpressionEvaluator, isExpression } from './expressions.js';
import type { Json } from './types.js';

const data: ExpressionData = {
  json: { name: 'Ada', total: 42, lines: [{ qty: 2 }, { qty: 3 }] },
  node: { 'Get Order': { json: { id: 'ord_1' } } },
  workflow: { id: 'wf_1', name: 'Orders' },
  execution: { id: 'exec_1', mode: 'webhook', resumeUrl: 'https://x.test/w/exec_1' },
  env: { PUBLIC_NAME: 'platform' },
  now: new Date('2030-01-02T03:04:05.000Z'),
  // These tests keep JSONata, which a workflow may still choose (`settings.expressionLanguage`).
  language: 'jsonata',
};

// Generous for what should succeed (a loaded CI machine starves worker threads); tight for runaways.
const ev = new ExpressionEvaluator(2_000);
const tight = new ExpressionEvaluator(200);
/** What a bounded runaway reports: the sandbox's deadline, JSONata's own checks, or the stack bound. */
const LIMIT = /took longer than|timeout|stack/i;
const run = (expr: string) => ev.evaluate(expr, data);
const runTight = (expr: string) => tight.evaluate(expr, data);

describe('expressions (JSONata)', () => {
  it('recognises expressions', async () => {
    expect(isExpression('={{ $json.a }}')).toBe(true);
    // n8n's rule: any leading `=` (its value is the rest: `=plain` → `plain`).
    expect(isExpression('=plain')).toBe(true);
    expect(await run('=plain')).toBe('plain');
    expect(isExpression('plain')).toBe(false);
    expect(isExpression('{{ $json.a }}')).toBe(false);
  });

  it('reads $json, $node, $workflow, $execution, $env and $now()', async () => {
    expect(await run('={{ $json.name }}')).toBe('Ada');
    expect(await run('={{ $json.total * 2 }}')).toBe(84);
    expect(await run('={{ $sum($json.lines.qty) }}')).toBe(5);
    expect(await run('={{ $node["Get Order"].json.id }}')).toBe('ord_1');
    expect(await run("={{ $node['Get Order'].json.id }}")).toBe('ord_1');
    expect(await run('={{ $workflow.name }}')).toBe('Orders');
    expect(await run('={{ $execution.resumeUrl }}')).toBe('https://x.test/w/exec_1');
    expect(await run('={{ $env.PUBLIC_NAME }}')).toBe('platform');
    expect(await run('={{ $env.PATH }}')).toBeUndefined();
    expect(await run('={{ $now() }}')).toBe('2030-01-02T03:04:05.000Z');
  });

  it('keeps the type of a whole expression and stringifies template parts', async () => {
    expect(await run('={{ $json.lines }}')).toEqual([{ qty: 2 }, { qty: 3 }]);
    expect(await run('=Hi {{ $json.name }}, total {{ $json.total }} {{ $json.missing }}!')).toBe(
      'Hi Ada, total 42 !',
    );
    expect(await run('=Lines: {{ $json.lines }}')).toBe('Lines: [{"qty":2},{"qty":3}]');
  });

  it('resolves expressions deep inside parameters and leaves the rest', async () => {
    const out = await ev.resolve({ a: ['={{ $json.name }}', 'x'], b: { c: '={{ 1 + 1 }}' }, d: 3 }, data);
    expect(out).toEqual({ a: ['Ada', 'x'], b: { c: 2 }, d: 3 });
  });

  it('reads plain $json field paths on the host exactly as JSONata does in the sandbox', async () => {
    const name = fc.constantFrom('a', 'b', 'c_1');
    const json = fc.dictionary(name, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 }) as fc.Arbitrary<
      Record<string, Json>
    >;
    await fc.assert(
      fc.asyncProperty(json, fc.array(name, { minLength: 1, maxLength: 3 }), async (item, path) => {
        const field = `$json.${path.join('.')}`;
        const at = { ...data, json: item };
        // The parenthesised form is not a plain path: JSONata answers it in the sandbox.
        expect(await ev.evaluate(`={{ ${field} }}`, at)).toEqual(await ev.evaluate(`={{ (${field}) }}`, at));
        expect(await ev.evaluate(`=x {{ ${field} }} y`, at)).toEqual(
          await ev.evaluate(`=x {{ (${field}) }} y`, at),
        );
      }),
      { numRuns: 60 },
    );
  });

  it('reports a syntax error as an ExpressionError', async () => {
    await expect(run('={{ $json. }}')).rejects.toBeInstanceOf(ExpressionError);
  });

  it('refuses to return a function', async () => {
    await expect(run('={{ $sum }}')).rejects.toThrow(/not JSON data/);
    await expect(run('={{ function($x){$x} }}')).rejects.toThrow(/not JSON data/);
  });
});

describe('expression sandbox (JSONata)', () => {
  const escapes = [
    '={{ process }}',
    '={{ $process }}',
    '={{ require }}',
    '={{ $require("fs") }}',
    '={{ globalThis }}',
    '={{ $globalThis }}',
    '={{ this.constructor.constructor("return process")() }}',
    '={{ $json.constructor.constructor("return process")() }}',
    '={{ $string.constructor }}',
    '={{ $string.constructor.constructor("return process")() }}',
    '={{ $json.__proto__ }}',
    '={{ $json.__proto__.constructor }}',
    '={{ ($f := $json.constructor.constructor; $f("return process")()) }}',
    '={{ $eval("$json.constructor") }}',
    '={{ "abc".constructor }}',
    '={{ $keys($json.__proto__) }}',
    '={{ $lookup($json, "constructor") }}',
    '={{ $lookup($sum, "constructor") }}',
  ];

  it.each(escapes)('%s is refused or undefined', async (expr) => {
    let result: unknown;
    try {
      result = await run(expr);
    } catch (err) {
      expect(err).toBeInstanceOf(ExpressionError);
      return;
    }
    expect(result === undefined || result === '' || (Array.isArray(result) && result.length === 0)).toBe(
      true,
    );
  });

  it('returns plain data only: nothing callable or with a foreign prototype', async () => {
    const result = await run('={{ {"a": $json, "b": [$json.lines]} }}');
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
  });

  it('cuts off infinite recursion within the time limit, and the process lives on', async () => {
    const t0 = Date.now();
    await expect(runTight('={{ (function($f){$f($f)})(function($f){$f($f)}) }}')).rejects.toThrow(LIMIT);
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(await run('={{ 1 + 1 }}')).toBe(2);
  });

  it('cuts off deep non-tail recursion', async () => {
    await expect(
      runTight('={{ ($f := function($n){ $n = 0 ? 0 : 1 + $f($n - 1) }; $f(1000000)) }}'),
    ).rejects.toThrow(LIMIT);
  });

  it('refuses a huge range', async () => {
    const t0 = Date.now();
    await expect(runTight('={{ [1..100000000] }}')).rejects.toBeInstanceOf(ExpressionError);
    await expect(runTight('={{ $count([1..5000000]) }}')).rejects.toBeInstanceOf(ExpressionError);
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it('cuts off a long loop by the time limit', async () => {
    const t0 = Date.now();
    await expect(runTight('={{ $reduce([1..900000], function($a, $b){ $a + $b }) }}')).rejects.toThrow(LIMIT);
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it('a regular expression that backtracks for ever fails its own expression at the time limit', async () => {
    const input = `${'a'.repeat(40)}!`;
    for (const pattern of ['/(a+)+$/', '/(a|a)*$/']) {
      const t0 = Date.now();
      await expect(runTight(`={{ $contains("${input}", ${pattern}) }}`)).rejects.toThrow(
        /took longer than 200 ms/,
      );
      expect(Date.now() - t0).toBeLessThan(2_000);
    }
    expect(await run('={{ $contains("order-12", /order-[0-9]+/) }}')).toBe(true);
  });

  it('regular expressions keep JSONata semantics: groups, flags, replace, split, UTF-16 positions', async () => {
    expect(await run('={{ $match("Order-12 order-7", /order-([0-9]+)/i).groups }}')).toEqual(['12', '7']);
    expect(await run('={{ $replace("a1b22c333", /[0-9]+/, "#") }}')).toBe('a#b#c#');
    expect(await run('={{ $split("a, b,c", /, ?/) }}')).toEqual(['a', 'b', 'c']);
    expect(await run('={{ $match("héllo wörld", /w.rld/).index }}')).toBe(6);
    expect(await run('={{ $match("😀x", /x/).index }}')).toBe(2);
    expect(await run('={{ $contains("line1\nline2", /^line2$/m) }}')).toBe(true);
  });

  it('supports backreferences and lookaheads (the deadline, not the pattern language, bounds them)', async () => {
    expect(await run('={{ $contains("abab", /(ab)\\1/) }}')).toBe(true);
    expect(await run('={{ $match("abac", /a(?=c)/).index }}')).toBe(2);
  });
});
