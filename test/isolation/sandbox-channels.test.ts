import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { otherAccountKey, workflowPlatform } from '../workflows/support.js';
import { deploy, expressionFlow, hook, runnerFlow } from './support.js';

/**
 * Isolation of guest JavaScript between executions, tried as an attacker with two accounts would: the
 * attacker's Code node plants a hook in the sandbox through some channel, the victim's execution runs
 * ordinary code over its webhook body (a password in it), and the attacker's next execution collects
 * what the hook saw. Each channel is tried across accounts and within one account (three executions).
 * One sandbox worker, so that every execution lands on the same one (the worst case for sharing).
 * SQLite only: nothing here touches storage beyond running the workflows.
 */

/** The victim: everyday code over its secret (iteration, Map/Set, regular expressions, generators, dates). */
const VICTIM = `
const s = body.password;
let n = 0;
for (const c of [s, 'x']) n += c.length;
for (const ch of s) n++;
const m = new Map([['p', s]]);
for (const [, v] of m) n += v.length;
n += [...m.values()].length;
const st = new Set([s]);
for (const v of st) n += v.length;
n += [...s.matchAll(/./g)].length;
n += [s].values().map((x) => x).toArray().length;
n += Iterator.from({ i: 0, next() { return this.i++ ? { done: true } : { done: false, value: s }; } }).toArray().length;
function* gen() { yield s; }
for (const v of gen()) n += v.length;
n += (await (async function* () { yield s; })().next()).value.length;
const when = DateTime.fromISO(body.when, { zone: 'Europe/Paris' }).toFormat('yyyy-MM-dd HH:mm');
const d = DateTime.local(2020, 1, 1, 12);
let valid;
try { valid = DateTime.fromISO('not a date').isValid; } catch { valid = 'threw'; }
return { n, when, zone: d.zoneName, locale: d.locale, valid, year: DateTime.now().year };
`;

/** A hook that wraps `next` of the iterator prototype `P` (an expression), logging each value. */
const wrapNext = (proto: string) => `
const P = ${proto};
const next = P.next;
const log = [];
const f = function (...a) {
  const r = next.apply(this, a);
  const note = (x) => { try { log.push(JSON.stringify(x.value)); } catch { log.push(String(x.value)); } };
  if (r && typeof r.then === 'function') r.then(note); else if (r && !r.done) note(r);
  return r;
};
f.log = log;
P.next = f;
return 'planted';`;
const collectNext = (proto: string) =>
  `const f = (${proto}).next; return f.log ? JSON.stringify(f.log) : null;`;

/** The victim's answer without `n` (which counts its password's characters). */
const withoutCount = (out: unknown) => ({ ...(out as Record<string, unknown>), n: undefined });

interface Channel {
  name: string;
  /** The attacker's planting code (a Code node body over `body`, `items`, `DateTime`). */
  plant: string;
  /** The attacker's collecting code: a string of what it captured, or null. */
  collect: string;
  /** The victim's code, when it differs from VICTIM. */
  victim?: string;
}

const iterator = (proto: string, name: string): Channel => ({
  name,
  plant: wrapNext(proto),
  collect: collectNext(proto),
});

const CHANNELS: Channel[] = [
  iterator('Object.getPrototypeOf([][Symbol.iterator]())', '%ArrayIteratorPrototype%.next'),
  iterator("Object.getPrototypeOf(''[Symbol.iterator]())", '%StringIteratorPrototype%.next'),
  iterator('Object.getPrototypeOf(new Map()[Symbol.iterator]())', '%MapIteratorPrototype%.next'),
  iterator('Object.getPrototypeOf(new Set()[Symbol.iterator]())', '%SetIteratorPrototype%.next'),
  iterator("Object.getPrototypeOf(/x/[Symbol.matchAll](''))", '%RegExpStringIteratorPrototype%.next'),
  iterator('Object.getPrototypeOf(function* () {}).prototype', '%GeneratorPrototype%.next'),
  iterator('Object.getPrototypeOf([].values().map((x) => x))', '%IteratorHelperPrototype%.next'),
  iterator(
    'Object.getPrototypeOf(Iterator.from({ next: () => ({ done: true }) }))',
    '%WrapForValidIteratorPrototype%.next',
  ),
  iterator('Object.getPrototypeOf(async function* () {}).prototype', '%AsyncGeneratorPrototype%.next'),
  {
    // Iterating an iterator (`[...map.values()]`) asks %IteratorPrototype% for [Symbol.iterator].
    name: '%IteratorPrototype%[Symbol.iterator]',
    plant: `
const P = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
const log = [];
const f = function () {
  const it = this;
  const next = it.next;
  return { next: () => { const r = next.call(it); if (!r.done) log.push(JSON.stringify(r.value)); return r; },
    [Symbol.iterator]() { return this; } };
};
f.log = log;
P[Symbol.iterator] = f;
return 'planted';`,
    collect: `const f = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()))[Symbol.iterator];
return f.log ? JSON.stringify(f.log) : null;`,
  },
  {
    // The Code node's runner calls the compiled code with `fn.apply(context, args)`: `apply` inherited
    // from %AsyncFunction.prototype% sees every argument, the input items among them.
    name: '%AsyncFunction.prototype%.apply',
    plant: `
const P = Object.getPrototypeOf(async function () {});
const apply = Function.prototype.apply;
const log = [];
const f = function (self, args) {
  try { log.push(JSON.stringify(args)); } catch (e) { log.push(String(e)); }
  return apply.call(this, self, args);
};
f.log = log;
Object.defineProperty(P, 'apply', { value: f, writable: true, configurable: true });
return 'planted';`,
    collect: `const f = Object.getPrototypeOf(async function () {}).apply; return f.log ? JSON.stringify(f.log) : null;`,
  },
  {
    // A Luxon zone is cached by name and handed to every later DateTime in that zone.
    name: "Luxon's cached IANAZone instance",
    plant: `
const z = DateTime.now().setZone('Europe/Paris').zone;
const offset = z.offset;
const log = [];
const f = function (ts) { log.push(ts); return offset.call(this, ts); };
f.log = log;
Object.defineProperty(z, 'offset', { value: f, writable: true, configurable: true });
return 'planted';`,
    collect: `const f = DateTime.now().setZone('Europe/Paris').zone.offset; return f.log ? JSON.stringify(f.log) : null;`,
  },
  {
    // Luxon's Locale class is not exported, so no walk from globalThis reaches its prototype.
    name: "Luxon's internal Locale.prototype",
    plant: `
const P = Object.getPrototypeOf(DateTime.now().loc);
const numberFormatter = P.numberFormatter;
const log = [];
const f = function (opts) {
  const inner = numberFormatter.call(this, opts);
  return { format: (n) => { log.push(n); return inner.format(n); } };
};
f.log = log;
P.numberFormatter = f;
return 'planted';`,
    collect: `const f = Object.getPrototypeOf(DateTime.now().loc).numberFormatter; return f.log ? JSON.stringify(f.log) : null;`,
  },
  {
    // Script-level `let` lives in the global lexical environment, not on the (frozen) global object.
    name: 'global lexical declarations (indirect eval)',
    plant: 'return "nothing to plant";',
    victim: '(0, eval)("let leftBehind = " + JSON.stringify(body.password)); return { stored: true };',
    collect: '(0, eval)("typeof leftBehind === \'undefined\' ? null : leftBehind");',
  },
];

/** The same expression in both accounts' workflows (a shared template): `arguments.callee` is the cached function. */
const SHARED_EXPRESSION = `={{ $json.body.mode === 'plant'
  ? (() => { const f = arguments.callee; f.log = []; const apply = Function.prototype.apply;
      Object.defineProperty(f, 'apply', { value: function (self, args) { f.log.push(JSON.stringify(args[0])); return apply.call(f, self, args); } });
      return 'planted'; })()
  : $json.body.mode === 'dump' ? JSON.stringify(arguments.callee.log ?? null) : 'length ' + $json.body.password.length }}`;

describe('sandbox isolation: no state crosses executions, across accounts or within one', () => {
  let p: TestPlatform;
  let keys: { a: string; b: string };
  let baseline: Record<string, unknown>;

  beforeAll(async () => {
    p = await workflowPlatform('sqlite', { EXPRESSION_WORKERS: '1' });
    keys = { a: p.adminKey, b: await otherAccountKey(p) };
    for (const [who, key] of Object.entries(keys)) {
      await deploy(p, runnerFlow(`iso-run-${who}`), key);
      await deploy(p, expressionFlow(`iso-expr-${who}`, SHARED_EXPRESSION), key);
    }
    // The victim's answer on a sandbox nobody has touched yet.
    const first = await hook(p, 'iso-run-a', {
      code: VICTIM,
      password: 'baseline',
      when: '1987-06-05T04:03:02',
    });
    expect(first.status).toBe(200);
    baseline = first.json.out as Record<string, unknown>;
  });
  afterAll(async () => {
    await p.close();
  });

  /** Runs `code` in the runner of account `who` and returns its result. */
  const run = async (who: 'a' | 'b', code: string, extra: Record<string, unknown> = {}) => {
    const res = await hook(p, `iso-run-${who}`, { code, ...extra });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.out;
  };

  // Across accounts (b attacks a), then within one (a's own executions).
  const attackers = [
    ['another account', 'b'],
    ['the same account', 'a'],
  ] as const;

  for (const channel of CHANNELS) {
    for (const [label, attacker] of attackers) {
      it(`${channel.name}: ${label} captures nothing of a later execution`, async () => {
        const secret = `hunter2-${channel.name.length}-${attacker}-${Math.random().toString(36).slice(2, 8)}`;
        // Planting may be refused (a frozen object): the attack then simply finds nothing.
        await run(attacker, `try { ${channel.plant} } catch (e) { return 'refused: ' + e.message; }`);
        const victim = await run('a', channel.victim ?? VICTIM, {
          password: secret,
          when: '1987-06-05T04:03:02',
        });
        if (!channel.victim) expect(withoutCount(victim)).toEqual(withoutCount(baseline));
        const collected = String(await run(attacker, channel.collect));
        expect(collected).not.toContain(secret);
        // Captured one character at a time (string iteration, matchAll): the letters in a row.
        const letters = (text: string) => text.replace(/[^A-Za-z0-9]/g, '');
        expect(letters(collected)).not.toContain(letters(secret));
        // Dates: neither the victim's year nor its timestamp (±1 day) reaches the attacker.
        expect(collected).not.toMatch(/\b1987\b/);
        const secretTs = Date.UTC(1987, 5, 5, 4, 3, 2);
        const numbers = (collected.match(/\d{11,13}/g) ?? []).map(Number);
        expect(numbers.filter((t) => Math.abs(t - secretTs) < 86_400_000)).toEqual([]);
      });
    }
  }

  it("Luxon's Settings (default zone and locale, clock, throwOnInvalid) set by one execution change no other", async () => {
    for (const [, attacker] of attackers) {
      const planted = await run(
        attacker,
        `const S = globalThis.luxon.Settings;
         const tried = [];
         for (const [k, v] of [['defaultZone', 'Asia/Tokyo'], ['defaultLocale', 'fr'], ['throwOnInvalid', true], ['now', () => 0]]) {
           try { S[k] = v; tried.push(k); } catch {}
         }
         return tried.join(',');`,
      );
      expect(typeof planted).toBe('string');
      const victim = await run('a', VICTIM, { password: 'x', when: '1987-06-05T04:03:02' });
      expect(withoutCount(victim)).toEqual(withoutCount(baseline));
    }
  });

  it('the compiled-expression cache hands no shared function object to another execution', async () => {
    for (const attacker of ['b', 'a'] as const) {
      const secret = `expr-secret-${attacker}-${Math.random().toString(36).slice(2, 8)}`;
      await hook(p, `iso-expr-${attacker}`, { mode: 'plant' });
      const victim = await hook(p, 'iso-expr-a', { mode: 'use', password: secret });
      expect(victim.status).toBe(200);
      expect(victim.json.result).toBe(`length ${secret.length}`);
      const dumped = await hook(p, `iso-expr-${attacker}`, { mode: 'dump' });
      expect(String(dumped.json.result)).not.toContain(secret);
    }
  });

  it('within one execution too, hidden intrinsics and Luxon internals are frozen (no hook for the next node)', async () => {
    const out = (await run(
      'b',
      `const targets = {
         arrayIterator: Object.getPrototypeOf([][Symbol.iterator]()),
         stringIterator: Object.getPrototypeOf(''[Symbol.iterator]()),
         mapIterator: Object.getPrototypeOf(new Map()[Symbol.iterator]()),
         setIterator: Object.getPrototypeOf(new Set()[Symbol.iterator]()),
         regexpStringIterator: Object.getPrototypeOf(/x/[Symbol.matchAll]('')),
         generator: Object.getPrototypeOf(function* () {}).prototype,
         asyncGenerator: Object.getPrototypeOf(async function* () {}).prototype,
         generatorFunction: Object.getPrototypeOf(function* () {}),
         asyncFunction: Object.getPrototypeOf(async function () {}),
         iteratorHelper: Object.getPrototypeOf([].values().map((x) => x)),
         locale: Object.getPrototypeOf(DateTime.now().loc),
         zone: Object.getPrototypeOf(DateTime.now().setZone('Europe/Paris').zone),
       };
       const open = [];
       for (const [name, t] of Object.entries(targets)) {
         try { Object.defineProperty(t, '__planted', { value: 1 }); } catch {}
         if (Object.hasOwn(t, '__planted')) open.push(name);
       }
       return open.join(',');`,
    )) as string;
    expect(out).toBe('');
  });

  it('Math.random draws differ between executions (a fresh realm is not a replayed one)', async () => {
    const draws = new Set<string>();
    for (const who of ['a', 'b', 'a', 'b'] as const)
      draws.add(String(await run(who, 'return [Math.random(), Math.random()].join(",");')));
    expect(draws.size).toBe(4);
  });

  it('$getWorkflowStaticData is refused, so no workflow reads another workflow’s static data', async () => {
    for (const who of ['a', 'b'] as const) {
      const out = await run(
        who,
        `try { const d = $getWorkflowStaticData('global'); return 'got ' + JSON.stringify(d); } catch (e) { return String(e.message); }`,
      );
      expect(String(out)).not.toMatch(/^got /);
    }
    const direct = await hook(p, 'iso-run-b', {
      code: 'return 1;',
    });
    expect(direct.status).toBe(200);
  });

  it('built-ins reachable from globalThis stay frozen (Array, Object, JSON, String, Math, Date, RegExp, Promise)', async () => {
    const out = (await run(
      'b',
      `const tried = [];
       const targets = { 'Array.prototype': Array.prototype, Object, 'Object.prototype': Object.prototype, JSON,
         'String.prototype': String.prototype, Math, 'Date.prototype': Date.prototype,
         'RegExp.prototype': RegExp.prototype, 'Promise.prototype': Promise.prototype, globalThis };
       for (const [name, t] of Object.entries(targets)) {
         try { Object.defineProperty(t, '__planted', { value: 1 }); } catch {}
         if (Object.hasOwn(t, '__planted')) tried.push(name);
       }
       return tried.join(',');`,
    )) as string;
    expect(out).toBe('');
  });
});
