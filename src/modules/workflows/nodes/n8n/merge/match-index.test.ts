import { describe, expect, it } from 'vitest';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { FUZZY_RULES } from '../compare-datasets/compare.js';
import { combineByFields, type MatchOptions, MERGE_FUZZY_RULES } from './combine.js';
import { isDeepEqual } from './json.js';
import { Keyer, type MatchRules, matchByFields, STRICT_RULES } from './match-index.js';

/** The n × m loop the index replaced: every item of input 1 against every item of input 2, in order. */
const loopMatch: typeof matchByFields = (left, right, rules, multiple) =>
  left.map((values) => {
    if (values === null) return [];
    const found: number[] = [];
    for (const [i, other] of right.entries()) {
      if (!values.every((v, f) => rules.equal(v, other[f]))) continue;
      found.push(i);
      if (multiple === 'first') break;
    }
    return found;
  });

/** Values that meet every rule of both fuzzy comparisons: empties, numbers as text, words, JSON text. */
const VALUES: Array<Json | undefined> = [
  undefined,
  null,
  0,
  -0,
  1,
  2,
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  '0',
  '1',
  '2',
  '-0',
  '1.5',
  '1.50',
  '01',
  ' 1',
  'NaN',
  'Infinity',
  '',
  ' ',
  'a',
  'A',
  'true',
  'TRUE',
  'True',
  'false',
  'FALSE',
  'yes',
  'YES',
  'no',
  'on',
  'off',
  'null',
  '[]',
  '[ ]',
  '{}',
  '[1]',
  ' [1]',
  '[1,2]',
  '{"a":1}',
  '{"a": 1}',
  '{"a":1,"b":2}',
  '{"b":2,"a":1}',
  '"x"',
  '{not json',
  true,
  false,
  [],
  [1],
  ['1'],
  [1, 2],
  [2, 1],
  [[]],
  [null],
  {},
  { a: 1 },
  { a: '1' },
  { a: 1, b: 2 },
  { b: 2, a: 1 },
  { a: { b: 1 } },
  { a: null },
  { a: [] },
];

/** `[1, <hole>, 3]`: not JSON, but a Code node can return one. */
function sparseArray(): Json {
  const array: Json[] = [1];
  array[2] = 3;
  return array;
}

const shared = (a: string[] | null, b: string[] | null) =>
  a !== null && b !== null && a.some((k) => b.includes(k));

/** Every pair of values: keys are shared exactly when the node's comparison says equal. */
function checkRules(rules: MatchRules) {
  const keyer = new Keyer();
  const wrong: string[] = [];
  for (const a of VALUES) {
    if (a === undefined) continue;
    for (const b of VALUES) {
      const equal = rules.equal(a, b);
      const found = shared(rules.probeKeys(a, keyer), rules.indexKeys(b, keyer));
      if (equal !== found) wrong.push(`${JSON.stringify(a)} ~ ${JSON.stringify(b)}: ${equal} vs ${found}`);
    }
  }
  return wrong;
}

describe('keyed matching (match-index.ts)', () => {
  it("strict keys are isDeepEqual's classes (key order, NaN, -0, undefined members)", () => {
    const keyer = new Keyer();
    const more: Json[] = [
      { x: [1, { y: null }], z: 'q' },
      { z: 'q', x: [1, { y: null }] },
      { x: [1, { y: 0 }], z: 'q' },
      { a: undefined as unknown as Json },
      { b: undefined as unknown as Json },
    ];
    for (const a of [...VALUES, ...more])
      for (const b of [...VALUES, ...more])
        expect(keyer.strict(a) === keyer.strict(b), `${JSON.stringify(a)} / ${JSON.stringify(b)}`).toBe(
          isDeepEqual(a, b),
        );
    // A sparse array cannot be keyed: isDeepEqual skips its holes.
    expect(keyer.strict(sparseArray())).toBeNull();
  });

  it('exact comparison: keys shared exactly when equal', () => {
    expect(checkRules(STRICT_RULES)).toEqual([]);
  });

  it("Compare Datasets' fuzzy comparison: keys shared exactly when equal", () => {
    expect(checkRules(FUZZY_RULES)).toEqual([]);
  });

  it("Merge's fuzzy comparison: keys shared exactly when equal", () => {
    expect(checkRules(MERGE_FUZZY_RULES)).toEqual([]);
  });

  it('gives the loop’s matches, in its order, for random inputs over one to three fields', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = (pool: Array<Json | undefined>) => pool[Math.floor(random() * pool.length)];
    for (let round = 0; round < 300; round++) {
      const fields = 1 + Math.floor(random() * 3);
      // A small pool per round, so values repeat (several matches) and types meet.
      const pool = Array.from({ length: 3 + Math.floor(random() * 8) }, () => pick(VALUES));
      const row = () => Array.from({ length: fields }, () => pick(pool));
      const left = Array.from({ length: Math.floor(random() * 25) }, () => {
        const values = row();
        return values.some((v) => v === undefined) ? null : (values as Json[]);
      });
      const right = Array.from({ length: Math.floor(random() * 25) }, row);
      for (const rules of [STRICT_RULES, FUZZY_RULES, MERGE_FUZZY_RULES])
        for (const multiple of ['all', 'first'] as const)
          expect(matchByFields(left, right, rules, multiple), `round ${round}`).toEqual(
            loopMatch(left, right, rules, multiple),
          );
    }
  });

  it('compares values it cannot key one by one, within a bound', () => {
    const sparse = sparseArray();
    const left = [[sparse], [1], [[1, 2, 3]]] as Json[][];
    const right = [[[1, 2, 3]], [1], [sparse], [[1, 9, 3]]];
    expect(matchByFields(left, right, STRICT_RULES, 'all')).toEqual(
      loopMatch(left, right, STRICT_RULES, 'all'),
    );
    const many = Array.from({ length: 40 }, () => [sparse]);
    const error = (() => {
      try {
        matchByFields(
          many,
          Array.from({ length: 40 }, () => [2]),
          STRICT_RULES,
          'all',
          {
            maxKeys: 256,
            pairAllowance: 1_000,
            maxMisses: 500,
          },
        );
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(NodeOperationError);
    expect((error as Error).message).toBe(
      'Too many items to compare one by one: more than 500 comparisons found no match',
    );
  });

  it('fuzzy keys over many fields multiply; past the bound an item is compared one by one', () => {
    const left = [Array.from({ length: 6 }, () => '1')];
    const right = [Array.from({ length: 6 }, () => 1), Array.from({ length: 6 }, () => true)];
    const limits = { maxKeys: 16, pairAllowance: 10, maxMisses: 10 };
    expect(matchByFields(left, right, FUZZY_RULES, 'all', limits)).toEqual([[0, 1]]);
  });
});

const mergeOptions = (over: Partial<MatchOptions> = {}): MatchOptions => ({
  joinMode: 'keepEverything',
  outputDataFrom: 'both',
  fuzzyCompare: false,
  dotNotation: true,
  multipleMatches: 'all',
  clash: {},
  ...over,
});

describe("Merge's combine by matching fields, keyed", () => {
  it('gives the loop’s output for random items: duplicates, missing fields, fuzzy, every join mode', () => {
    let seed = 11;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(pool: readonly T[]) => pool[Math.floor(random() * pool.length)] as T;
    const item = (side: number, i: number): Item => {
      const json: Record<string, Json> = { side, i };
      const k = pick(VALUES.slice(0, 30));
      if (k !== undefined) json.k = k;
      if (random() < 0.7) json.o = { id: pick([1, '1', 2, true, null]) } as Json;
      return { json };
    };
    for (let round = 0; round < 80; round++) {
      const a = Array.from({ length: 1 + Math.floor(random() * 20) }, (_, i) => item(1, i));
      const b = Array.from({ length: 1 + Math.floor(random() * 20) }, (_, i) => item(2, i));
      const pairs =
        random() < 0.5
          ? [{ field1: 'k', field2: 'k' }]
          : [
              { field1: 'k', field2: 'k' },
              { field1: 'o.id', field2: 'o.id' },
            ];
      const o = mergeOptions({
        joinMode: pick(['keepMatches', 'keepNonMatches', 'keepEverything', 'enrichInput1', 'enrichInput2']),
        outputDataFrom: pick(['both', 'input1', 'input2']),
        fuzzyCompare: random() < 0.5,
        dotNotation: random() < 0.8,
        multipleMatches: pick(['all', 'first']),
        clash: { resolveClash: pick(['preferLast', 'preferInput1', 'addSuffix']) },
      });
      expect(combineByFields(a, b, pairs, o), `round ${round}`).toEqual(
        combineByFields(a, b, pairs, o, loopMatch),
      );
    }
  });

  // The loop took tens of seconds here; the test's own timeout is the bound (no timing is asserted).
  it('joins 10,000 × 10,000 items through the index', () => {
    const a = Array.from({ length: 10_000 }, (_, i) => ({ json: { k: i } }));
    const b = Array.from({ length: 10_000 }, (_, i) => ({ json: { k: -1 - i } }));
    const c = Array.from({ length: 10_000 }, (_, i) => ({ json: { k: String(9_999 - i), w: i } }));
    expect(combineByFields(a, b, [{ field1: 'k', field2: 'k' }], mergeOptions())).toHaveLength(20_000);
    const fuzzy = combineByFields(
      a,
      c,
      [{ field1: 'k', field2: 'k' }],
      mergeOptions({ joinMode: 'keepMatches', fuzzyCompare: true }),
    );
    expect(fuzzy).toHaveLength(10_000);
    expect(fuzzy[0]?.json).toEqual({ k: '0', w: 9_999 });
  }, 15_000);

  it('fails past the bound on matched pairs, naming the way out', () => {
    const same = (n: number) => Array.from({ length: n }, (_, i) => ({ json: { k: 1, i } }));
    expect(() =>
      combineByFields(same(400), same(400), [{ field1: 'k', field2: 'k' }], mergeOptions()),
    ).toThrow(/^Too many matches: more than 100800 pairs of items match/);
    expect(
      combineByFields(
        same(400),
        same(400),
        [{ field1: 'k', field2: 'k' }],
        mergeOptions({ multipleMatches: 'first', joinMode: 'keepMatches' }),
      ),
    ).toHaveLength(400);
  });
});
