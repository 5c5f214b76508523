import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { configureExpressionSandbox } from './expression-sandbox.js';
import { type ExpressionData, ExpressionError, ExpressionEvaluator } from './expressions.js';
import type { Item } from './types.js';

/**
 * n8n's expression language: the examples are n8n's documented ones (docs.n8n.io, "Expressions",
 * "Data transformation functions", "Luxon"), each asserting the value n8n produces.
 */

const input: Item[] = [
  { json: { name: 'ada lovelace', total: 42.4567, tags: ['a', 'b', 'a'], email: 'x@example.com' } },
  { json: { name: 'grace hopper', total: 7, tags: [], email: 'no' } },
];
const nodes: Record<string, Item[]> = {
  'Get Order': [
    { json: { id: 'ord_1', lines: [{ qty: 2 }, { qty: 3 }] } },
    { json: { id: 'ord_2', lines: [] } },
  ],
  Webhook: [{ json: { body: { user: 'u1' }, headers: { 'x-id': 'h' } } }],
};

const data = (over: Partial<ExpressionData> = {}): ExpressionData => ({
  json: (input[0] as Item).json,
  node: {},
  nodeSnapshot: (name) => (nodes[name] ? { items: nodes[name], params: { p: 1 }, runIndex: 0 } : undefined),
  nodeNames: ['Webhook', 'Get Order', 'Later', 'Here'],
  input,
  itemIndex: 0,
  runIndex: 0,
  prevNode: { name: 'Get Order', outputIndex: 0, runIndex: 0 },
  workflow: { id: 'wf_1', name: 'Orders', active: true },
  execution: { id: 'exec_1', mode: 'webhook', resumeUrl: 'https://x.test/w/exec_1' },
  env: { PUBLIC_NAME: 'platform' },
  vars: { region: 'eu' },
  now: new Date('2030-01-02T03:04:05.000Z'),
  ...over,
});

const ev = new ExpressionEvaluator(2_000);
const tight = new ExpressionEvaluator(200);
const run = (expr: string, over?: Partial<ExpressionData>) => ev.evaluate(expr, data(over));
const LIMIT = /took longer than|too deeply|memory/i;

describe('n8n expressions: JavaScript', () => {
  it.each([
    ['={{ $json.name }}', 'ada lovelace'],
    ['={{ $json.tags.length }}', 3],
    ['={{ JSON.stringify($json.tags) }}', '["a","b","a"]'],
    ['={{ Math.round($json.total) }}', 42],
    ['={{ $json.name.toUpperCase() }}', 'ADA LOVELACE'],
    ['={{ $json.total > 40 && $json.name === "ada lovelace" }}', true],
    ['={{ $json.total > 50 ? "big" : "small" }}', 'small'],
    ['={{ $json.tags.includes("b") }}', true],
    ['={{ $json.missing ?? "default" }}', 'default'],
    ['={{ [1, 2, 3].map((n) => n * 2) }}', [2, 4, 6]],
    ['={{ {a: {b: 1}} }}', { a: { b: 1 } }],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: an n8n expression holding a template literal
    ['={{ `${$json.name} (${$json.total})` }}', 'ada lovelace (42.4567)'],
    ['=Hello {{ $json.name }}, you owe {{ $json.total }}', 'Hello ada lovelace, you owe 42.4567'],
    ['=tags: {{ $json.tags }}', 'tags: ["a","b","a"]'],
    ['={{ $input.first().json.name }}', 'ada lovelace'],
    ['={{ $input.last().json.name }}', 'grace hopper'],
    ['={{ $input.all().length }}', 2],
    ['={{ $input.item.json.total }}', 42.4567],
    ['={{ $("Get Order").first().json.id }}', 'ord_1'],
    ['={{ $("Get Order").item.json.id }}', 'ord_1'],
    ['={{ $("Get Order").all().map((i) => i.json.id) }}', ['ord_1', 'ord_2']],
    ['={{ $("Get Order").params.p }}', 1],
    ['={{ $("Later").isExecuted }}', false],
    ['={{ $node["Get Order"].json.id }}', 'ord_1'],
    ["={{ $node['Webhook'].json.headers['x-id'] }}", 'h'],
    ['={{ $prevNode.name }}', 'Get Order'],
    ['={{ $runIndex }}', 0],
    ['={{ $itemIndex }}', 0],
    ['={{ $workflow.name }} {{ $workflow.id }} {{ $workflow.active }}', 'Orders wf_1 true'],
    ['={{ $execution.id }} {{ $execution.mode }}', 'exec_1 webhook'],
    ['={{ $vars.region }}', 'eu'],
    ['={{ $env.PUBLIC_NAME }}', 'platform'],
    ['={{ $env.PATH }}', undefined],
    ['={{ $if($json.total > 10, "yes", "no") }}', 'yes'],
    ['={{ $ifEmpty($json.missing, "fallback") }}', 'fallback'],
    ['={{ $ifEmpty($json.name, "fallback") }}', 'ada lovelace'],
    ['={{ $jmespath($("Get Order").first().json, "lines[*].qty") }}', [2, 3]],
    ['={{ $max(1, 5, 3) }} {{ $min(4, 2) }}', '5 2'],
  ])('%s → %j', async (expr, expected) => {
    expect(await run(expr)).toEqual(expected);
  });

  it.each([
    ['={{ $now.toISO() }}', '2030-01-02T03:04:05.000Z'],
    ['={{ $now }}', '2030-01-02T03:04:05.000Z'],
    ['={{ $today.toISO() }}', '2030-01-02T00:00:00.000Z'],
    ['={{ $now.plus(1, "day").toFormat("yyyy-MM-dd") }}', '2030-01-03'],
    ['={{ $now.minus({ hours: 4 }).hour }}', 23],
    ['={{ $now.plus({ days: 7 }).weekdayLong }}', 'Wednesday'],
    ['={{ $now.format("dd LLL yyyy") }}', '02 Jan 2030'],
    ['={{ $now.beginningOf("month").toISODate() }}', '2030-01-01'],
    ['={{ $now.endOfMonth().day }}', 31],
    ['={{ $now.extract("year") }}', 2030],
    ['={{ $now.isWeekend() }}', false],
    ['={{ DateTime.fromISO("2024-02-29").plus({ years: 1 }).toISODate() }}', '2025-02-28'],
    ['={{ "2024-03-10T12:00:00Z".toDateTime().toMillis() }}', Date.UTC(2024, 2, 10, 12)],
    ['={{ $now.setZone("Europe/Berlin").toFormat("HH:mm ZZ") }}', '04:04 +01:00'],
    ['={{ $now.diffTo("2030-01-01T03:04:05Z", "days") }}', 1],
    ['={{ (1234567.891).format("de-DE") }}', '1.234.567,891'],
  ])('Luxon dates: %s → %j', async (expr, expected) => {
    expect(await run(expr)).toEqual(expected);
  });

  it('uses the workflow time zone for $now and $today', async () => {
    expect(await run('={{ $now.toISO() }}', { timezone: 'America/New_York' })).toBe(
      '2030-01-01T22:04:05.000-05:00',
    );
    expect(await run('={{ $today.toISODate() }}', { timezone: 'America/New_York' })).toBe('2030-01-01');
  });

  it.each([
    ['={{ "hello world".toTitleCase() }}', 'Hello World'],
    ['={{ "HELLO. how ARE you".toSentenceCase() }}', 'Hello. How are you'],
    ['={{ "Hello World Now".toSnakeCase() }}', 'hello_world_now'],
    ['={{ "".isEmpty() }} {{ "a".isNotEmpty() }}', 'true true'],
    ['={{ "mail me at a.b@example.com now".extractEmail() }}', 'a.b@example.com'],
    ['={{ "see https://n8n.io/path?q=1 for more".extractUrl() }}', 'https://n8n.io/path?q=1'],
    ['={{ "https://www.example.com/a/b".extractDomain() }}', 'www.example.com'],
    ['={{ "x@example.com".isEmail() }} {{ "no".isEmail() }}', 'true false'],
    ['={{ "12.5".toNumber() + 1 }}', 13.5],
    ['={{ "12.5".isNumeric() }}', true],
    ['={{ "<p>Hi <b>there</b></p>".removeTags() }}', 'Hi there'],
    ['={{ "a b&c".urlEncode() }}', 'a%20b%26c'],
    // n8n: `true` keeps the characters of URI syntax (encodeURI), the default encodes them too.
    ['={{ "a b&c".urlEncode(true) }}', 'a%20b&c'],
    ['={{ "a%3Db%20c".urlDecode() }} | {{ "a%3Db%20c".urlDecode(true) }}', 'a=b c | a%3Db c'],
    ['={{ "héllo".base64Encode() }}', 'aMOpbGxv'],
    ['={{ "aMOpbGxv".base64Decode() }}', 'héllo'],
    // Digests of UTF-8 text in hex, as n8n's hash(): the well-known digests of "hello", then Node's own.
    ['={{ "hello".hash() }}', '5d41402abc4b2a76b9719d911017c592'],
    ['={{ "hello".hash("SHA256") }}', '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824'],
    ['={{ "hello".hash("sha1") }}', 'aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d'],
    ['={{ "héllo".hash("md5") }}', createHash('md5').update('héllo').digest('hex')],
    ['={{ "héllo".hash("sha3") }}', createHash('sha3-512').update('héllo').digest('hex')],
    ['={{ "héllo".hash("base64") }}', 'aMOpbGxv'],
    ['={{ \'{"a":1}\'.parseJson().a }}', 1],
    ['={{ "true".toBoolean() }} {{ "0".toBoolean() }}', 'true false'],
    ['={{ (3.14159).round(2) }}', 3.14],
    ['={{ (3.2).ceil() }} {{ (3.8).floor() }}', '4 3'],
    ['={{ (4).isEven() }} {{ (3).isOdd() }}', 'true true'],
    ['={{ [1, 2, 3].sum() }}', 6],
    ['={{ [4, 1, 9].max() }} {{ [4, 1, 9].min() }}', '9 1'],
    ['={{ [2, 4].average() }}', 3],
    ['={{ ["a", "b", "a"].unique() }}', ['a', 'b']],
    ['={{ [1, null, "", 2].compact() }}', [1, 2]],
    ['={{ [1, 2, 3, 4, 5].chunk(2) }}', [[1, 2], [3, 4], [5]]],
    ['={{ [{ a: 1, b: 2 }, { a: 3 }].pluck("a") }}', [1, 3]],
    ['={{ [1, 2, 3].first() }} {{ [1, 2, 3].last() }}', '1 3'],
    ['={{ [1, 2, 3].difference([2]) }}', [1, 3]],
    ['={{ [1, 2].union([2, 3]) }}', [1, 2, 3]],
    ['={{ [1, 2, 3].intersection([2, 3, 4]) }}', [2, 3]],
    ['={{ [{ k: "a", v: 1 }, { k: "b", v: 2 }].smartJoin("k", "v") }}', { a: 1, b: 2 }],
    ['={{ [].isEmpty() }}', true],
    ['={{ ({ a: 1, b: null }).compact() }}', { a: 1 }],
    ['={{ ({ a: 1 }).hasField("a") }} {{ ({}).isEmpty() }}', 'true true'],
    ['={{ ({ a: 1, b: 2 }).removeField("a") }}', { b: 2 }],
    ['={{ ({ a: 1 }).keys() }}', ['a']],
    ['={{ ({ a: 1 }).merge({ a: 2, b: 3 }) }}', { a: 1, b: 3 }],
    // WHATWG form encoding, as URLSearchParams writes it.
    ['={{ ({ a: "x y", b: "hello!()" }).urlEncode() }}', 'a=x+y&b=hello%21%28%29'],
    ['={{ ({ a: [1] }).toJsonString() }}', '{"a":[1]}'],
  ])('data transformation functions: %s → %j', async (expr, expected) => {
    expect(await run(expr)).toEqual(expected);
  });

  it('an assignment of an extension name to a data object makes its own property', async () => {
    expect(
      await run(
        // biome-ignore lint/suspicious/noTemplateCurlyInString: an n8n expression holding a template literal
        '={{ (() => { const o = {}; o.keys = 1; o.toString = () => "me"; return [o.keys, `${o}`]; })() }}',
      ),
    ).toEqual([1, 'me']);
  });

  it("a TypeError of the code leaves its segment undefined, as n8n's evaluator does", async () => {
    expect(await run('={{ $json.missing.deeper }}')).toBeUndefined();
    expect(await run('={{ $json["missing"].deeper }}')).toBeUndefined();
    expect(await run('=a{{ $json.missing.deeper }}b{{ 1 + 1 }}')).toBe('ab2');
    expect(await run('={{ $json.nothing() }}')).toBeUndefined();
    expect(await run('={{ undefinedName + 1 }}')).toBeUndefined();
    expect(await run('={{ $json.missing?.deeper ?? "fallback" }}')).toBe('fallback');
  });

  it("fails on n8n's own expression errors: an unknown node, a syntax error, an extension's error", async () => {
    await expect(run('={{ $("Nope").first() }}')).rejects.toThrow(/doesn't exist/);
    await expect(run('={{ $("Later").first() }}')).rejects.toThrow(/hasn't been executed/);
    await expect(run('={{ $json.name. }}')).rejects.toThrow(ExpressionError);
    await expect(run('={{ "abc".toNumber() }}')).rejects.toThrow(/cannot convert to number/);
    await expect(run('={{ "abc".hash("crc32") }}')).rejects.toThrow(/Unknown algorithm crc32/);
    await expect(run('={{ __hostHash("md4", "x") }}')).rejects.toThrow(/bad hash call/);
  });

  it("dates are in the workflow's time zone: $now, $today, DateTime.local(), toDateTime()", async () => {
    const berlin = { timezone: 'Europe/Berlin' };
    expect(await run('={{ $now.toISO() }}', berlin)).toBe('2030-01-02T04:04:05.000+01:00');
    expect(await run('={{ $today.toISO() }}', berlin)).toBe('2030-01-02T00:00:00.000+01:00');
    expect(await run('={{ DateTime.local(2024, 7, 1).toISO() }}', berlin)).toBe(
      '2024-07-01T00:00:00.000+02:00',
    );
    expect(await run('={{ "2024-03-30T18:49".toDateTime().toISO() }}', berlin)).toBe(
      '2024-03-30T18:49:00.000+01:00',
    );
    expect(await run('={{ (1704085200).toDateTime("s").hour }}', berlin)).toBe(6);
    expect(await run('={{ (45345).toDateTime("excel").toISO() }}', berlin)).toBe(
      '2024-02-23T01:00:00.000+01:00',
    );
    expect(await run('={{ (1708695471000000).toDateTime("us").toISO() }}', berlin)).toBe(
      '2024-02-23T14:37:51.000+01:00',
    );
    // Without a zone of its own, a workflow's dates are the instance's (GENERIC_TIMEZONE, UTC here).
    expect(await run('={{ DateTime.local(2024, 7, 1).toISO() }}')).toBe('2024-07-01T00:00:00.000Z');
    // The zone belongs to the evaluation: the next one, of another workflow, does not inherit it.
    expect(await run('={{ $now.zoneName }}', { timezone: 'Asia/Tokyo' })).toBe('Asia/Tokyo');
    expect(await run('={{ $now.zoneName }}')).toBe('UTC');
  });

  it('an instance time zone that is not an IANA zone stops the configuration', () => {
    expect(() => configureExpressionSandbox({ workers: 2, memoryMb: 64, timezone: 'Mars/Olympus' })).toThrow(
      /GENERIC_TIMEZONE: 'Mars\/Olympus' is not an IANA time zone/,
    );
  });

  it('$evaluateExpression, $jmespath, $min/$max and the functions without a receiver', async () => {
    expect(await run('={{ $evaluateExpression("{{ 1 + 2 }}") }}')).toBe(3);
    expect(await run('={{ $evaluateExpression("Hi {{ $json.name }}") }}')).toBe('Hi ada lovelace');
    expect(await run('={{ $evaluateExpression("{{ $json.name }}", 1) }}')).toBe('grace hopper');
    await expect(run('={{ $evaluateExpression("{{ 1 }}", 9) }}')).rejects.toThrow(/no input item 9/);
    expect(await run('={{ $jmespath($json, "tags[1]") }}')).toBe('b');
    expect(await run('={{ $min(3, 1, 2) }} {{ $max(3, 1, 2) }} {{ $average(1, 2) }}')).toBe('1 3 1.5');
    expect(await run('={{ zip(["a", "b"], [1, 2]) }}')).toEqual({ a: 1, b: 2 });
    await expect(run('={{ zip(["a"], [1, 2]) }}')).rejects.toThrow(/not of equal length/);
    await expect(run('={{ $ifEmpty(1) }}')).rejects.toThrow(/expected two arguments/);
    await expect(run('={{ $if(true) }}')).rejects.toThrow(/at least 2 parameters/);
  });

  it("n8n's edges: errors where n8n raises them, recursive compact(), merge() precedence", async () => {
    expect(await run('={{ [{ a: 1, b: [null, { c: "" , d: 2 }] }, {}, "nil"].compact() }}')).toEqual([
      { a: 1, b: [{ d: 2 }] },
    ]);
    expect(await run('={{ [{ a: 1 }, { a: 2, b: 2 }].merge([{ a: 9, c: 3 }, { b: 9 }]) }}')).toEqual({
      a: 2,
      b: 2,
      c: 3,
    });
    expect(await run('={{ "$1,5".toFloat === undefined }}')).toBe(false);
    await expect(run('={{ "1,5".toFloat() }}')).rejects.toThrow(/expected \. as decimal separator/);
    expect(await run('={{ "€ 12.50".toFloat() }} {{ "$42".toInt() }} {{ "ff".toInt(16) }}')).toBe(
      '12.5 42 255',
    );
    await expect(run('={{ "abc".toInt() }}')).rejects.toThrow(/cannot convert to integer/);
    await expect(run('={{ (1.5).isEven() }}')).rejects.toThrow(/only callable on integers/);
    await expect(run('={{ (5).toDateTime("days") }}')).rejects.toThrow(/Unsupported format 'days'/);
    await expect(run('={{ [1, 2].chunk(0) }}')).rejects.toThrow(/positive whole number/);
    await expect(run('={{ ({ a: 1 }).removeFieldsContaining("") }}')).rejects.toThrow(/non-empty string/);
    // A function of another type names the types that have it.
    await expect(run('={{ "abc".keys() }}')).rejects.toThrow(/keys\(\) is only callable on type "Object"/);
    await expect(run('={{ (1).isEmpty() }}')).rejects.toThrow(/isEmpty\(\) is only callable on types/);
    // An ISO date string is a date to n8n's functions.
    expect(await run('={{ "2024-03-30T18:49:00.000Z".plus(1, "day").toISOString() }}')).toBe(
      '2024-03-31T18:49:00.000Z',
    );
    expect(await run('={{ "2024-01-01T00:00:00.000Z".toInt() }}')).toBe(1704067200000);
    expect(
      await run(
        '={{ DateTime.now().plus(5, "minutes").isInNext(10) }} {{ DateTime.now().minus(1, "hour").isInNext(10) }}',
      ),
    ).toBe('true false');
  });

  it('numberList() is bounded: a list past 1,000,000 numbers fails with a clear message', async () => {
    expect(await run('={{ numberList(3, 1) }}')).toEqual([3, 2, 1]);
    await expect(run('={{ numberList(1, 1e12) }}')).rejects.toThrow(/at most 1,000,000 numbers/);
    await expect(
      tight.evaluate('={{ numberList(1, 1e6).map((n) => numberList(1, 1e6)) }}', data()),
    ).rejects.toThrow(LIMIT);
    expect(await ev.evaluate('={{ 1 + 1 }}', data())).toBe(2);
  });

  it('an ambiguous .item (more items than the current index pairs) says what to use instead', async () => {
    await expect(run('={{ $("Get Order").item.json.id }}', { itemIndex: 5 })).rejects.toThrow(/first\(\)/);
  });

  it('resolves nested parameters per item, copying objects read directly', async () => {
    const params = { a: '={{ $json.tags }}', b: ['={{ $json.total.round(1) }}', 'plain'], c: 3 };
    const out = (await ev.resolve(params, data({ json: (input[0] as Item).json }))) as { a: string[] };
    expect(out).toEqual({ a: ['a', 'b', 'a'], b: [42.5, 'plain'], c: 3 });
    out.a.push('changed');
    expect((input[0] as Item).json.tags).toEqual(['a', 'b', 'a']);
  });
});

describe('n8n expressions: the sandbox', () => {
  it.each([
    '={{ process.env }}',
    '={{ require("fs") }}',
    '={{ this.constructor.constructor("return process")() }}',
    '={{ $json.constructor.constructor("return process")() }}',
    '={{ (() => {}).constructor("return process")() }}',
    '={{ Function("return this")().process.mainModule }}',
    '={{ import("fs") }}',
    '={{ globalThis.require }}',
    '={{ setTimeout }}',
    '={{ fetch("http://127.0.0.1") }}',
    '={{ WebAssembly }}',
    // A published n8n escape: reaching the host through an error's stack or `arguments.callee.caller`.
    '={{ (function(){ return arguments.callee.caller })().constructor("return process")() }}',
    '={{ new Error().stack.constructor.constructor("return process")() }}',
  ])('%s cannot reach the host', async (expr) => {
    const result = await run(expr).then(
      (v) => ({ v }),
      (e: Error) => ({ e: e.message }),
    );
    if ('v' in result) expect(result.v ?? null).not.toMatchObject({ pid: expect.anything() });
    else
      expect(result.e).toMatch(
        /not defined|not a function|undefined|null|cannot|not supported|Cannot|denied|import/i,
      );
  });

  it('prototype changes do not outlive their own evaluation', async () => {
    await run(
      '={{ (() => { try { Array.prototype.map = () => "pwned"; } catch {} try { Object.prototype.polluted = 1; } catch {} try { JSON.parse = () => 1; } catch {} return 1; })() }}',
    );
    await run(
      '={{ (() => { "use strict"; try { String.prototype.toUpperCase = () => "x"; } catch (e) { return e.message; } })() }}',
    );
    expect(await run('={{ [1].map((x) => x + 1) }}')).toEqual([2]);
    expect(await run('={{ ({}).polluted }}')).toBeUndefined();
    expect(await run('={{ JSON.parse("[3]") }}')).toEqual([3]);
    expect(await run('={{ "a".toUpperCase() }}')).toBe('A');
  });

  it.each([
    ['an infinite loop', '={{ (() => { while (true) {} })() }}'],
    ['deep recursion', '={{ (function f(n) { return f(n + 1) + 1; })(0) }}'],
    ['an allocation bomb', '={{ (() => { const a = []; for (;;) a.push("x".repeat(1e6)); })() }}'],
    ['a catastrophic regex', '={{ /(a+)+$/.test("a".repeat(40) + "!") }}'],
    ['a huge string', '={{ "x".repeat(2 ** 28) }}'],
  ])('%s fails its own expression, and the next one works', async (_what, expr) => {
    await expect(tight.evaluate(expr, data())).rejects.toThrow(
      /took longer than|too deeply|memory|too large|Invalid string length|RangeError/i,
    );
    expect(await ev.evaluate('={{ 1 + 1 }}', data())).toBe(2);
  });

  it('a runaway in one tenant does not starve another', async () => {
    const a = new ExpressionEvaluator(300, 'tenant-a');
    const b = new ExpressionEvaluator(2_000, 'tenant-b');
    const runaways = Array.from({ length: 3 }, () =>
      a.evaluate('={{ (() => { while (true) {} })() }}', data()).catch((e: Error) => e.message),
    );
    expect(await b.evaluate('={{ "ok" }}', data())).toBe('ok');
    for (const message of await Promise.all(runaways)) expect(message).toMatch(LIMIT);
  });
});
