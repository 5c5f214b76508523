import { NodeOperationError } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import { isDeepEqual } from './json.js';

/**
 * Matching items of two inputs on field values (Merge's "Combine → Matching Fields", Compare Datasets)
 * in time linear in the items, not n × m: input 2 is indexed by keys built from its values on the
 * fields to match, and each item of input 1 looks up only the keys its own values can equal. Every
 * candidate found is still checked with the node's own comparison, so the keys only narrow the search:
 * results, their order ("first" is the lowest index of input 2) and multiple matches are the loop's.
 */

type Value = Json | undefined;

/** How a node compares field values, and keys that find every value a value equals. */
export interface MatchRules {
  /** The node's comparison, run on every candidate. */
  equal(a: Value, b: Value): boolean;
  /**
   * Keys a value of input 2 is filed under (undefined: its item lacks the field); an empty list when
   * it equals no defined value; null when it cannot be keyed (then it is compared one by one).
   */
  indexKeys(value: Value, keys: Keyer): string[] | null;
  /** Keys to look a value of input 1 (defined) up under: every value it equals is filed under one. */
  probeKeys(value: Json, keys: Keyer): string[] | null;
}

/**
 * Keys of `isDeepEqual`'s classes: two values have the same key exactly when they are deeply equal
 * (object keys in any order, NaN equal to NaN, 0 to -0, functions and symbols only to themselves).
 */
export class Keyer {
  private readonly ids = new Map<unknown, number>();

  /** null for a sparse array: `isDeepEqual` skips its holes, so it is equal to more than one class. */
  strict(value: unknown): string | null {
    switch (typeof value) {
      case 'undefined':
        return 'u';
      case 'boolean':
        return value ? 't' : 'f';
      case 'number':
        return `n${value}`;
      case 'string':
        return `s${JSON.stringify(value)}`;
      case 'bigint':
        return `i${value}`;
      case 'object': {
        if (value === null) return 'z';
        const parts: string[] = [];
        if (Array.isArray(value)) {
          for (let i = 0; i < value.length; i++) {
            const part = i in value ? this.strict(value[i]) : null;
            if (part === null) return null;
            parts.push(part);
          }
          return `[${parts.join(',')}]`;
        }
        const bag = value as Record<string, unknown>;
        for (const key of Object.keys(bag).sort()) {
          const part = this.strict(bag[key]);
          if (part === null) return null;
          parts.push(`${JSON.stringify(key)}:${part}`);
        }
        return `{${parts.join(',')}}`;
      }
      default: {
        let id = this.ids.get(value);
        if (id === undefined) {
          id = this.ids.size;
          this.ids.set(value, id);
        }
        return `x${id}`;
      }
    }
  }
}

/** Exact comparison (`isDeepEqual`): one key per value. */
export const STRICT_RULES: MatchRules = {
  equal: isDeepEqual,
  indexKeys: (value, keys) => {
    if (value === undefined) return [];
    const key = keys.strict(value);
    return key === null ? null : [key];
  },
  probeKeys: (value, keys) => {
    const key = keys.strict(value);
    return key === null ? null : [key];
  },
};

/** Text that may be JSON for an object or an array (JSON's whitespace first is allowed). */
export const looksLikeJsonObject = (text: string): boolean => /^\s*[[{]/.test(text);

/** A string `n` gives through `String(n)`: the key of that number, if any. */
export function numberKeyOf(text: string, keys: Keyer): string | null {
  return String(Number(text)) === text ? keys.strict(Number(text)) : null;
}

/** Composite keys of one item over all fields (every combination); null past `max`. */
function combine(perField: string[][], max: number): string[] | null {
  let out = [''];
  for (const keys of perField) {
    if (out.length * keys.length > max) return null;
    const next: string[] = [];
    for (const prefix of out) for (const key of keys) next.push(`${prefix}${key.length}:${key}`);
    out = next;
  }
  return out;
}

function keysOf(values: readonly Value[], one: (v: Value) => string[] | null, max: number): string[] | null {
  const perField: string[][] = [];
  for (const value of values) {
    const keys = one(value);
    if (keys === null) return null;
    perField.push([...new Set(keys)]);
  }
  return combine(perField, max);
}

export interface MatchLimits {
  /** Composite keys one item may have (its fields' keys multiplied); beyond, it is compared one by one. */
  maxKeys: number;
  /** Matched pairs allowed beyond the items of both inputs (each pair is an output item). */
  pairAllowance: number;
  /** Comparisons that find no match (items that could not be keyed), for the whole node. */
  maxMisses: number;
}

export const MATCH_LIMITS: MatchLimits = { maxKeys: 256, pairAllowance: 100_000, maxMisses: 1_000_000 };

const ascending = (a: number, b: number) => a - b;

/**
 * For each item of input 1 (its values on the fields to match, or null when it lacks one), the indexes
 * of the items of input 2 it matches, ascending: all of them, or the first.
 */
export function matchByFields(
  left: ReadonlyArray<readonly Json[] | null>,
  right: ReadonlyArray<readonly Value[]>,
  rules: MatchRules,
  multiple: 'all' | 'first',
  limits: MatchLimits = MATCH_LIMITS,
): number[][] {
  const keyer = new Keyer();
  const index = new Map<string, number[]>();
  /** Items of input 2 that could not be keyed: candidates for every lookup. */
  const loose: number[] = [];
  right.forEach((values, i) => {
    const keys = keysOf(values, (v) => rules.indexKeys(v, keyer), limits.maxKeys);
    if (keys === null) {
      loose.push(i);
      return;
    }
    for (const key of keys) {
      const list = index.get(key);
      if (!list) index.set(key, [i]);
      else if (list[list.length - 1] !== i) list.push(i);
    }
  });
  const maxPairs = left.length + right.length + limits.pairAllowance;
  let pairs = 0;
  let misses = 0;
  const matches = (values: readonly Json[], i: number): boolean => {
    const other = right[i] as readonly Value[];
    if (values.every((value, f) => rules.equal(value, other[f]))) return true;
    if (++misses > limits.maxMisses)
      throw new NodeOperationError(
        `Too many items to compare one by one: more than ${limits.maxMisses} comparisons found no match`,
        {
          description:
            'Values on the fields to match that cannot be indexed (or too many fields under fuzzy compare) are compared with every item of the other input; match on fewer fields or on plain values',
        },
      );
    return false;
  };
  const every = (): number[] => Array.from(right, (_, i) => i);
  return left.map((values) => {
    if (values === null) return [];
    const keys = keysOf(values, (v) => rules.probeKeys(v as Json, keyer), limits.maxKeys);
    const lists: number[][] = [];
    if (keys === null) lists.push(every());
    else {
      for (const key of keys) {
        const list = index.get(key);
        if (list) lists.push(list);
      }
      if (loose.length > 0) lists.push(loose);
    }
    if (multiple === 'first') {
      let best = -1;
      for (const list of lists)
        for (const i of list) {
          if (best !== -1 && i >= best) break;
          if (matches(values, i)) {
            best = i;
            break;
          }
        }
      return best === -1 ? [] : [best];
    }
    const candidates =
      lists.length === 1 ? (lists[0] as number[]) : [...new Set(lists.flat())].sort(ascending);
    const found: number[] = [];
    for (const i of candidates) {
      if (!matches(values, i)) continue;
      found.push(i);
      if (++pairs > maxPairs)
        throw new NodeOperationError(
          `Too many matches: more than ${maxPairs} pairs of items match, and each pair is an output item`,
          {
            description:
              'Values on the fields to match repeat in both inputs. Include only the first match (option "Multiple Matches"), or match on more fields',
          },
        );
    }
    return found;
  });
}
