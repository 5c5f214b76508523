import { NodeOperationError } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { getField, isDeepEqual, isObject, type JsonObject, mergeJson } from './json.js';
import { type MatchRules, matchByFields, numberKeyOf, STRICT_RULES } from './match-index.js';

/** n8n's clash handling of Merge: which input wins a clashing field, and how nested fields merge. */
export interface Clash {
  resolveClash?: string;
  mergeMode?: 'deepMerge' | 'shallowMerge';
  overrideEmpty?: boolean;
}

export type JoinMode = 'keepMatches' | 'keepNonMatches' | 'keepEverything' | 'enrichInput1' | 'enrichInput2';

export interface MatchOptions {
  joinMode: JoinMode;
  outputDataFrom: 'both' | 'input1' | 'input2';
  fuzzyCompare: boolean;
  dotNotation: boolean;
  multipleMatches: 'all' | 'first';
  clash: Clash;
}

export const mergeInto = (clash: Clash, target: JsonObject, sources: JsonObject[]): JsonObject =>
  mergeJson(target, sources, {
    deep: clash.mergeMode !== 'shallowMerge',
    keepFilled: clash.overrideEmpty === true,
  });

export const withSuffix = (items: Item[], suffix: string): Item[] =>
  items.map((i) => ({
    json: Object.fromEntries(Object.entries(i.json).map(([k, v]) => [`${k}_${suffix}`, v])),
  }));

const falsy = (v: Json | undefined) =>
  v === undefined ||
  v === null ||
  v === '' ||
  (Array.isArray(v) && v.length === 0) ||
  (isObject(v) && Object.keys(v).length === 0);

const TRUE_WORDS = ['true', 'yes', 'on', '1'];
const FALSE_WORDS = ['false', 'no', 'off', '0'];

/** n8n's fuzzy compare: empty values match each other, numbers and booleans match their text. */
function fuzzyEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (falsy(a) && falsy(b)) return true;
  if (typeof a === 'number' && typeof b === 'string') return String(a) === b;
  if (typeof a === 'string' && typeof b === 'number') return a === String(b);
  if (typeof a === 'boolean' && typeof b === 'string')
    return (a ? TRUE_WORDS : FALSE_WORDS).includes(b.toLowerCase());
  if (typeof a === 'string' && typeof b === 'boolean')
    return (b ? TRUE_WORDS : FALSE_WORDS).includes(a.toLowerCase());
  if (typeof a === 'string' && b !== null && typeof b === 'object') return a === JSON.stringify(b);
  if (typeof b === 'string' && a !== null && typeof a === 'object') return b === JSON.stringify(a);
  return isDeepEqual(a, b);
}

/** Field pairs to match on; n8n's errors for blank names. */
function checkPairs(pairs: Array<{ field1: string; field2: string }>): void {
  const [only] = pairs;
  if (pairs.length === 1 && only?.field1 === '' && only.field2 === '')
    throw new NodeOperationError(
      'You need to define at least one pair of fields in "Fields to Match" to match on',
    );
  pairs.forEach((pair, i) => {
    if (pair.field1 === '' || pair.field2 === '')
      throw new NodeOperationError(
        `You need to define both fields in "Fields to Match" for pair ${i + 1}, field 1 = '${pair.field1}' field 2 = '${pair.field2}'`,
      );
  });
}

interface Matched {
  entry: Item;
  matches: Item[];
}

/**
 * Keys for Merge's fuzzy comparison (matching by an index, match-index.ts): a value of input 2 is filed
 * under its exact key, and also as an empty value (undefined, null, '', [], {}), a yes/no word, or (an
 * object or array) its JSON text; a value of input 1 looks up every class `fuzzyEqual` makes it equal to.
 */
export const MERGE_FUZZY_RULES: MatchRules = {
  equal: fuzzyEqual,
  indexKeys(value, keys) {
    if (value === undefined) return ['F'];
    const exact = keys.strict(value);
    if (exact === null) return null;
    const out = [exact];
    if (falsy(value)) out.push('F');
    if (typeof value === 'string') {
      const word = wordOf(value);
      if (word !== undefined) out.push(`W${word}`);
    } else if (value !== null && typeof value === 'object') {
      // fuzzyEqual compares a string with JSON.stringify of the object (compared one by one where it throws).
      const text = jsonText(value);
      if (text === null) return null;
      if (text !== undefined) out.push(`J${text}`);
    }
    return out;
  },
  probeKeys(value, keys) {
    const exact = keys.strict(value);
    if (exact === null) return null;
    const out = [exact];
    if (falsy(value)) out.push('F');
    if (typeof value === 'number') out.push(keys.strict(String(value)) as string);
    else if (typeof value === 'string') {
      const number = numberKeyOf(value, keys);
      if (number !== null) out.push(number);
      const word = wordOf(value);
      if (word !== undefined) out.push(keys.strict(word) as string);
      out.push(`J${value}`);
    } else if (typeof value === 'boolean') out.push(`W${value}`);
    else if (value !== null && typeof value === 'object') {
      const text = jsonText(value);
      if (text === null) return null;
      if (text !== undefined) out.push(keys.strict(text) as string);
    }
    return out;
  },
};

/** What a yes/no word stands for (`fuzzyEqual`'s words, any case). */
function wordOf(text: string): boolean | undefined {
  const lower = text.toLowerCase();
  if (TRUE_WORDS.includes(lower)) return true;
  if (FALSE_WORDS.includes(lower)) return false;
  return undefined;
}

/** JSON.stringify's answer (undefined for some objects with `toJSON`); null where it throws. */
function jsonText(value: Json): string | undefined | null {
  try {
    return JSON.stringify(value) as string | undefined;
  } catch {
    return null;
  }
}

function findMatches(
  input1: Item[],
  input2: Item[],
  pairs: Array<{ field1: string; field2: string }>,
  o: MatchOptions,
  match: typeof matchByFields,
) {
  const lookups = input1.map((entry) => {
    const values = pairs.map((p) => getField(entry.json, p.field1, o.dotNotation));
    return values.some((v) => v === undefined) ? null : (values as Json[]);
  });
  const found = match(
    lookups,
    input2.map((other) => pairs.map((p) => getField(other.json, p.field2, o.dotNotation))),
    o.fuzzyCompare ? MERGE_FUZZY_RULES : STRICT_RULES,
    o.multipleMatches,
  );
  const matched: Matched[] = [];
  const unmatched1: Item[] = [];
  const hit = new Set<number>();
  input1.forEach((entry, n) => {
    const indexes = found[n] as number[];
    for (const i of indexes) hit.add(i);
    const matches = indexes.map((i) => input2[i] as Item);
    if (matches.length === 0) unmatched1.push(entry);
    else if (o.outputDataFrom === 'both' || o.joinMode === 'enrichInput1' || o.joinMode === 'enrichInput2')
      for (const m of matches) matched.push({ entry, matches: [m] });
    else matched.push({ entry, matches });
  });
  return {
    matched,
    matched2: input2.filter((_, i) => hit.has(i)),
    unmatched1,
    unmatched2: input2.filter((_, i) => !hit.has(i)),
  };
}

function mergeMatched(matched: Matched[], clash: Clash): Item[] {
  // Input 2 wins a clash unless told otherwise, enrichInput2 included (n8n's mergeByFields fixture).
  const resolve = clash.resolveClash || 'preferLast';
  return matched.map(({ entry, matches }) => {
    if (resolve === 'addSuffix') {
      const [e] = withSuffix([entry], '1') as [Item];
      return {
        json: mergeInto(
          clash,
          e.json,
          withSuffix(matches, '2').map((m) => m.json),
        ),
      };
    }
    if (resolve === 'preferInput1') {
      const [firstMatch, ...rest] = matches as [Item, ...Item[]];
      return { json: mergeInto(clash, firstMatch.json, [...rest.map((m) => m.json), entry.json]) };
    }
    return {
      json: mergeInto(
        clash,
        entry.json,
        matches.map((m) => m.json),
      ),
    };
  });
}

/** Merge v3 "Combine → Matching Fields": joins input 1 and input 2 on field values. */
export function combineByFields(
  input1: Item[],
  input2: Item[],
  pairs: Array<{ field1: string; field2: string }>,
  o: MatchOptions,
  /** How items are matched (tests swap in the n × m loop this replaced). */
  match: typeof matchByFields = matchByFields,
): Item[] {
  checkPairs(pairs);
  const { joinMode, outputDataFrom } = o;
  if (input1.length === 0 || input2.length === 0) {
    if (joinMode === 'keepNonMatches' && input1.length === 0 && outputDataFrom === 'input1') return [];
    if (joinMode === 'keepNonMatches' && input2.length === 0 && outputDataFrom === 'input2') return [];
    if (joinMode === 'keepMatches') return [];
    if (joinMode === 'enrichInput1' && input1.length === 0) return [];
    if (joinMode === 'enrichInput2' && input2.length === 0) return [];
    return [...input1, ...input2];
  }
  const m = findMatches(input1, input2, pairs, o, match);
  const suffix = o.clash.resolveClash === 'addSuffix';
  switch (joinMode) {
    case 'keepMatches':
    case 'keepEverything': {
      let out: Item[] =
        outputDataFrom === 'input1'
          ? m.matched.map((x) => x.entry)
          : outputDataFrom === 'input2'
            ? m.matched2
            : mergeMatched(m.matched, o.clash);
      if (joinMode === 'keepEverything') {
        out = [
          ...out,
          ...(suffix ? withSuffix(m.unmatched1, '1') : m.unmatched1),
          ...(suffix ? withSuffix(m.unmatched2, '2') : m.unmatched2),
        ];
      }
      return out;
    }
    case 'keepNonMatches':
      if (outputDataFrom === 'input1') return m.unmatched1;
      if (outputDataFrom === 'input2') return m.unmatched2;
      return [
        ...m.unmatched1.map((i) => ({ json: { ...i.json, _source: 'input1' } })),
        ...m.unmatched2.map((i) => ({ json: { ...i.json, _source: 'input2' } })),
      ];
    case 'enrichInput1':
      return [
        ...mergeMatched(m.matched, o.clash),
        ...(suffix ? withSuffix(m.unmatched1, '1') : m.unmatched1),
      ];
    case 'enrichInput2':
      return [
        ...mergeMatched(m.matched, o.clash),
        ...(suffix ? withSuffix(m.unmatched2, '2') : m.unmatched2),
      ];
  }
}
