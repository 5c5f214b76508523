import { NodeOperationError } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { getField, isDeepEqual, isObject, type JsonObject, setField, unsetField } from '../merge/json.js';
import {
  looksLikeJsonObject,
  type MatchRules,
  matchByFields,
  numberKeyOf,
  STRICT_RULES,
} from '../merge/match-index.js';

/** n8n's Compare Datasets logic (GenericFunctions.ts): match, then split into four outputs. */

export interface PairToMatch {
  field1: string;
  field2: string;
}

export interface CompareOptions {
  skipFields?: string;
  disableDotNotation?: boolean;
  multipleMatches?: 'first' | 'all';
  fuzzyCompare?: boolean;
  resolve: string;
  preferWhenMix?: string;
  exceptWhenMix?: string | string[];
  /** The node's typeVersion: v2 names the sides inputA/inputB and keeps falsy values, v2.1 fuzzy
   * compares every key, v2.3 keeps a falsy value taken over by "mix". */
  version?: number;
}

type Equal = (a: Json | undefined, b: Json | undefined) => boolean;

const isFalsy = (v: Json | undefined) => v === null || v === '' || (Array.isArray(v) && v.length === 0);

function parsedEquals(text: string, value: Json): boolean {
  try {
    return isDeepEqual(JSON.parse(text) as Json, value);
  } catch {
    return false;
  }
}

/** Strict deep equality, or n8n's fuzzy rules: empties alike, '1' = 1, 'true' = true, JSON text = value. */
export function comparer(fuzzy: boolean): Equal {
  return (a, b) => {
    if (!fuzzy) return isDeepEqual(a, b);
    if (a !== null && b !== null && typeof a === typeof b) return isDeepEqual(a, b);
    if (isFalsy(a) && isFalsy(b)) return true;
    if ((isFalsy(a) && b === undefined) || (a === undefined && isFalsy(b))) return true;
    if (typeof a === 'number' && typeof b === 'string') return String(a) === b;
    if (typeof a === 'string' && typeof b === 'number') return a === String(b);
    if (a !== null && typeof a === 'object' && typeof b === 'string') return parsedEquals(b, a);
    if (b !== null && typeof a === 'string' && typeof b === 'object') return parsedEquals(a, b);
    for (const [x, y] of [
      [a, b],
      [b, a],
    ] as const) {
      if (typeof x !== 'boolean') continue;
      if (typeof y === 'string' && (y.toLowerCase() === String(x) || y === (x ? '1' : '0'))) return true;
      if (typeof y === 'number' && y === (x ? 1 : 0)) return true;
    }
    return isDeepEqual(a, b);
  };
}

/**
 * Keys for the fuzzy comparison (matching by an index, ../merge/match-index.ts): a value of input 2 is
 * filed under its exact key, and also as an empty value (null, '', [], a missing field), a word
 * `true`/`false` in any case, or a JSON text of an object or array (by the parsed value); a value of
 * input 1 looks up every class the rules above make it equal to. Each rule that answers "equal" has a
 * key both sides share; the comparison itself still decides.
 */
export const FUZZY_RULES: MatchRules = {
  equal: comparer(true),
  indexKeys(value, keys) {
    if (value === undefined) return ['F'];
    const exact = keys.strict(value);
    if (exact === null) return null;
    const out = [exact];
    if (isFalsy(value)) out.push('F');
    if (typeof value === 'string') {
      const lower = value.toLowerCase();
      if (lower === 'true' || lower === 'false') out.push(`W${lower}`);
      const parsed = parsedObject(value);
      if (parsed !== undefined) {
        const key = keys.strict(parsed);
        if (key !== null) out.push(`J${key}`);
      }
    }
    return out;
  },
  probeKeys(value, keys) {
    const exact = keys.strict(value);
    if (exact === null) return null;
    const out = [exact];
    if (isFalsy(value)) out.push('F');
    if (typeof value === 'number') {
      out.push(keys.strict(String(value)) as string);
      if (value === 1 || value === 0) out.push(keys.strict(value === 1) as string);
    } else if (typeof value === 'string') {
      const number = numberKeyOf(value, keys);
      if (number !== null) out.push(number);
      const lower = value.toLowerCase();
      if (lower === 'true' || value === '1') out.push(keys.strict(true) as string);
      if (lower === 'false' || value === '0') out.push(keys.strict(false) as string);
      const parsed = parsedObject(value);
      if (parsed !== undefined) {
        const key = keys.strict(parsed);
        if (key !== null) out.push(key);
      }
    } else if (typeof value === 'boolean') {
      out.push(`W${value}`, keys.strict(value ? '1' : '0') as string, keys.strict(value ? 1 : 0) as string);
    } else if (value !== null && typeof value === 'object') out.push(`J${exact}`);
    return out;
  },
};

/** JSON text of an object or an array, parsed; undefined for anything else. */
function parsedObject(text: string): Json | undefined {
  if (!looksLikeJsonObject(text)) return undefined;
  try {
    const parsed = JSON.parse(text) as Json;
    return parsed !== null && typeof parsed === 'object' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** n8n's `value || null`: every falsy value (0, false, '') is shown as null. */
const orNull = (v: Json | undefined): Json => (v ? v : null);
/** From v2 only a missing value is shown as null. */
const undefinedAsNull = (v: Json | undefined): Json => (v === undefined ? null : v);

function compareItems(
  a: Item,
  b: Item,
  pairs: PairToMatch[],
  o: CompareOptions,
  skip: Skip,
  equal: Equal,
): Item {
  const version = o.version ?? 1;
  const nullish = version >= 2 ? undefinedAsNull : orNull;
  const [nameA, nameB] = version >= 2 ? ['inputA', 'inputB'] : ['input1', 'input2'];
  const keys: JsonObject = {};
  for (const { field1 } of pairs) if (a.json[field1] !== undefined) keys[field1] = a.json[field1] as Json;
  const keysA = Object.keys(a.json);
  const keysB = new Set(Object.keys(b.json));
  const all = [...new Set([...keysA, ...keysB])];
  const toCompare = o.fuzzyCompare && version >= 2.1 ? all : keysA.filter((k) => keysB.has(k));
  const same: JsonObject = {};
  for (const key of toCompare) if (equal(a.json[key], b.json[key])) same[key] = a.json[key] as Json;
  const different: JsonObject = {};
  const skipped: JsonObject = {};
  for (const key of all.filter((k) => !(k in same))) {
    if (o.resolve === 'preferInput1') different[key] = nullish(a.json[key]);
    else if (o.resolve === 'preferInput2') different[key] = nullish(b.json[key]);
    else {
      const valueA = nullish(a.json[key]);
      const valueB = nullish(b.json[key]);
      const nested = version >= 2.1 && o.disableDotNotation !== true && !skip.set.has(key);
      const inner = nested ? skip.dotted.filter((f) => f.startsWith(key)) : [];
      if (inner.length > 0) {
        // v2.1: "skip" names fields inside an object; they move from `different` to `skipped`.
        if (!isObject(valueA) || !isObject(valueB))
          throw new NodeOperationError(
            `The field '${key}' is not an object. It is not possible to use dot notation.`,
          );
        const restA = structuredClone(valueA);
        const restB = structuredClone(valueB);
        const movedA: JsonObject = {};
        const movedB: JsonObject = {};
        for (const field of inner) {
          const path = field.replace(`${key}.`, '');
          const fromA = getField(restA, path);
          const fromB = getField(restB, path);
          if (fromA !== undefined) setField(movedA, path, fromA);
          if (fromB !== undefined) setField(movedB, path, fromB);
          unsetField(restA, path);
          unsetField(restB, path);
        }
        skipped[key] = { [nameA]: movedA, [nameB]: movedB };
        different[key] = { [nameA]: restA, [nameB]: restB };
        continue;
      }
      const pair = { [nameA]: valueA, [nameB]: valueB };
      if (skip.set.has(key)) skipped[key] = pair;
      else different[key] = pair;
    }
  }
  return { json: { keys, same, different, ...(Object.keys(skipped).length > 0 ? { skipped } : {}) } };
}

function combineItems(
  a: Item,
  b: Item,
  prefer: string,
  except: string | string[],
  dot: boolean,
  keepFalsy: boolean,
): Item {
  const [entry, match] = prefer === 'input2' ? [b, a] : [a, b];
  const json = structuredClone(entry.json);
  const fields = Array.isArray(except) ? except : except ? except.split(',').map((f) => f.trim()) : [];
  for (const field of fields) {
    if (!dot) json[field] = match.json[field] ?? null;
    else
      setField(
        json,
        field,
        keepFalsy ? undefinedAsNull(getField(match.json, field)) : orNull(getField(match.json, field)),
      );
  }
  return { json };
}

/** The fields to skip comparing: in order, as a set, and those naming a field inside an object. */
interface Skip {
  list: string[];
  set: ReadonlySet<string>;
  dotted: string[];
}

function omit(json: JsonObject, fields: ReadonlySet<string>): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(json)) if (!fields.has(k)) out[k] = v;
  return out;
}

/** A copy without the (dotted) fields. */
function without(json: JsonObject, fields: string[]): JsonObject {
  const copy = structuredClone(json);
  for (const field of fields) if (field !== '') unsetField(copy, field);
  return copy;
}

/** [in A only, same, different, in B only]. */
export function findMatches(
  input1: Item[],
  input2: Item[],
  pairs: PairToMatch[],
  o: CompareOptions,
  /** How items are matched (tests swap in the n × m loop this replaced). */
  match: typeof matchByFields = matchByFields,
): Item[][] {
  const equal = comparer(o.fuzzyCompare === true);
  const dot = o.disableDotNotation !== true;
  const all = o.multipleMatches === 'all';
  const list = (o.skipFields ?? '').split(',').map((f) => f.trim());
  const skip: Skip = { list, set: new Set(list), dotted: list.filter((f) => f.includes('.')) };
  if (!dot && skip.dotted.length > 0)
    throw new NodeOperationError(
      `Dot notation is disabled, but field to skip comparing '${skip.dotted[0]}' contains dot`,
    );
  const nestedSkip = dot && skip.dotted.length > 0;
  const read = (json: JsonObject, field: string) => (dot ? getField(json, field) : json[field]);
  const lookups = input1.map((entry) => {
    const values = pairs.map((p) => read(entry.json, p.field1));
    return values.some((v) => v === undefined) ? null : (values as Json[]);
  });
  const found = match(
    lookups,
    input2.map((candidate) => pairs.map((p) => read(candidate.json, p.field2))),
    o.fuzzyCompare === true ? FUZZY_RULES : STRICT_RULES,
    all ? 'all' : 'first',
  );
  const unmatched1: Item[] = [];
  const matched: Array<{ entry: Item; matches: Item[] }> = [];
  const seen2 = new Set<number>();
  input1.forEach((entry, n) => {
    const indexes = found[n] as number[];
    for (const i of indexes) seen2.add(i);
    if (indexes.length > 0) matched.push({ entry, matches: indexes.map((i) => input2[i] as Item) });
    else unmatched1.push(entry);
  });
  const same: Item[] = [];
  const different: Item[] = [];
  for (const { entry, matches } of matched) {
    let kept: Item | undefined;
    for (const match of matches) {
      const a = nestedSkip ? without(entry.json, skip.list) : omit(entry.json, skip.set);
      const b = nestedSkip ? without(match.json, skip.list) : omit(match.json, skip.set);
      const equalItems = o.fuzzyCompare ? Object.keys(a).every((k) => equal(a[k], b[k])) : equal(a, b);
      if (equalItems) {
        kept ??= o.fuzzyCompare && o.resolve === 'preferInput2' ? match : entry;
        continue;
      }
      if (o.resolve === 'preferInput1') different.push(entry);
      else if (o.resolve === 'preferInput2') different.push(match);
      else if (o.resolve === 'mix')
        different.push(
          combineItems(
            entry,
            match,
            o.preferWhenMix ?? 'input1',
            o.exceptWhenMix ?? '',
            dot,
            (o.version ?? 1) >= 2.3,
          ),
        );
      else different.push(compareItems(entry, match, pairs, o, skip, equal));
    }
    if (kept && Object.keys(kept.json).length > 0) same.push(kept);
  }
  const unmatched2 = input2.filter((_, i) => !seen2.has(i));
  return [unmatched1, same, different, unmatched2];
}
