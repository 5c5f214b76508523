import { afterAll, describe, expect, it } from 'vitest';
import { createExpressionSandbox } from '../../src/modules/workflows/engine/expression-sandbox.js';
import { type ExpressionData, ExpressionEvaluator } from '../../src/modules/workflows/engine/expressions.js';
import { predictAfter } from './math-random-predictor.js';

/**
 * The sandbox audit (issue 27, item 1), tried as an outside attacker with two accounts: what crosses
 * from one execution or account to another outside the guest heap that the worker restores, or what lets
 * a guest break the worker (or the process) for everybody. One worker, so that both accounts' executions
 * land on it. The real guest scripts and evaluator; no storage involved.
 */

const pool = createExpressionSandbox({ workers: 1, memoryMb: 64, perTenant: 1 });
afterAll(() => pool.close());

const accountA = new ExpressionEvaluator(2_000, 'acct-a', pool);
const accountB = new ExpressionEvaluator(2_000, 'acct-b', pool);

let executions = 0;
const data = (): ExpressionData => ({
  json: {},
  node: {},
  input: [{ json: {} }],
  workflow: { id: 'wf', name: 'audit' },
  execution: { id: `exec-${++executions}`, mode: 'webhook', resumeUrl: '' },
  env: {},
  now: new Date('2030-01-02T03:04:05.000Z'),
});

/** A Code node run in a new execution: its output items' json, or the error it failed with. */
const code = async (evaluator: ExpressionEvaluator, body: string, timeoutMs = 8_000) => {
  try {
    const run = await evaluator.runCode(body, 'runOnceForAllItems', data(), { timeoutMs });
    return { ok: true as const, json: run.items.map((item) => item.json) };
  } catch (error) {
    return { ok: false as const, message: (error as Error).message };
  }
};

/** Everyday recursion: about as deep as a fresh worker allows comfortably. */
const DEEP = 'const f = (n) => (n === 0 ? 0 : f(n - 1) + 1); return [{ json: { depth: f(1500) } }];';

/**
 * Fills the guest heap to its limit, gives a few MiB back, then asks a host function for a result that
 * does not fit in what is left, from 300 calls deep: the host's conversion of its answer into a guest
 * string fails inside WebAssembly (a trap), which unwinds without resetting the WebAssembly stack pointer.
 */
const TRAP = `
const keep = [];
try { for (;;) keep.push('x'.repeat(1 << 18) + keep.length); } catch {}
keep.length -= 16;
const f = (n) => (n ? f(n - 1) : btoa('y'.repeat(3e6)).length);
return [{ json: { n: f(300) } }];`;

describe('sandbox audit: host functions', () => {
  it('a host answer that does not fit fails its own call; the worker stays sound for the next account', async () => {
    expect(await code(accountB, DEEP)).toEqual({ ok: true, json: [{ depth: 1500 }] });
    for (let i = 0; i < 4; i++) {
      const attack = await code(accountA, TRAP);
      expect(attack.ok).toBe(false);
    }
    // The WebAssembly stack pointer lives outside the linear memory that the worker restores: before the
    // fix, every trap left it lower, until every account's ordinary recursion overflowed on this worker.
    expect(await code(accountB, DEEP)).toEqual({ ok: true, json: [{ depth: 1500 }] });
    expect(await code(accountA, DEEP)).toEqual({ ok: true, json: [{ depth: 1500 }] });
  }, 60_000);

  it('a text the host cannot copy out of a full guest heap fails the call, not reads as empty', async () => {
    // 25 million two-byte characters fill the heap: their UTF-8 copy for the host does not fit.
    const out = await code(accountA, "return [{ json: { h: 'é'.repeat(2.5e7).hash('sha256') } }];");
    const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    expect(out).not.toEqual({ ok: true, json: [{ h: EMPTY_SHA256 }] });
    expect(out.ok).toBe(false);
  }, 30_000);

  it('refuses oversized byte conversions with a clear error, without running the worker out of memory', async () => {
    for (const body of [
      "return [{ json: { n: Buffer.from('x'.repeat(2e7), 'utf16le').length } }];",
      "return [{ json: { n: Buffer.concat(Array(3).fill(Buffer.from('x'.repeat(3e6)))).length } }];",
      "return [{ json: { n: Buffer.from('QUFB'.repeat(3e6), 'base64').toJSON().data.length } }];",
    ]) {
      const out = await code(accountA, body);
      expect(out.ok).toBe(false);
      expect(out.ok ? '' : out.message).toMatch(/too large/);
    }
    // Within the bound, a million parts convert (this ran the worker's V8 heap out of memory before).
    expect(
      await code(
        accountA,
        "return [{ json: { n: Buffer.concat(Array(1e6).fill(Buffer.from('AAA'))).length } }];",
      ),
    ).toEqual({ ok: true, json: [{ n: 3e6 }] });
    // Ordinary sizes still convert.
    expect(
      await code(
        accountB,
        "const b = Buffer.concat([Buffer.from('héllo'), Buffer.from([1, 2, 255])]); return [{ json: { s: b.toString('base64'), n: b.length, d: b.toJSON().data.length, u: Buffer.from('aGk=', 'base64').toString() } }];",
      ),
    ).toEqual({ ok: true, json: [{ s: 'aMOpbGxvAQL/', n: 9, d: 9, u: 'hi' }] });
  }, 60_000);
});

describe('sandbox audit: state outside the guest heap', () => {
  it("one account cannot foresee another's Math.random from its own draws on the same worker", async () => {
    const attack = await code(
      accountA,
      'return [{ json: { draws: Array.from({ length: 200 }, () => Math.random()) } }];',
    );
    const victim = await code(
      accountB,
      'return [{ json: { draws: Array.from({ length: 3 }, () => Math.random()) } }];',
    );
    if (!attack.ok || !victim.ok) throw new Error('the Code nodes failed');
    const draws = attack.json[0]?.draws as number[];
    const secret = victim.json[0]?.draws as number[];
    // V8's generator (the worker's, shared by every call) is linear: 200 draws gave its state away, and
    // with it the victim's next values (a token or password made with Math.random).
    const foreseen = predictAfter(draws, 64) ?? [];
    expect(foreseen.filter((value) => secret.includes(value))).toEqual([]);
  });
});

describe('sandbox audit: what a guest sends back', () => {
  it.each([
    ['a thrown error', "throw new Error('x'.repeat(2e7));"],
    ['a thrown value', "throw { toString() { return 'z'.repeat(2e7); } };"],
    ['a thrown string', "throw 's'.repeat(2e7);"],
  ])('bounds the text of %s (it reaches the main thread and the execution record)', async (_, body) => {
    const out = await code(accountA, body);
    expect(out.ok).toBe(false);
    expect(out.ok ? 0 : out.message.length).toBeLessThan(4_100);
  });

  it('bounds the text of an expression error', async () => {
    const error = await accountA
      .evaluate("={{ (() => { throw new Error('x'.repeat(2e7)); })() }}", data())
      .then(
        () => null,
        (e: Error) => e,
      );
    expect(error).toBeInstanceOf(Error);
    expect(error?.message.length).toBeLessThan(4_300);
  });
});
