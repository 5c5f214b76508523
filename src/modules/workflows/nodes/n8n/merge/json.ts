import type { Json } from '../../../engine/types.js';

/**
 * JSON helpers with the semantics n8n's data nodes get from lodash (`get`, `set`, `unset`, `merge`,
 * `isEqual`, `lt`), written for plain JSON items. Field names are dot paths (`a.b`, `a[0].b`) unless a
 * node's "disable dot notation" option is on; prototype keys are refused, never written.
 */

export type JsonObject = Record<string, Json>;

const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);

export const isObject = (v: unknown): v is JsonObject =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** `a.b[0].c` → ['a', 'b', '0', 'c'] */
function pathKeys(path: string): string[] {
  const keys: string[] = [];
  for (const part of path.split('.')) {
    const re = /\[(\d+)\]/g;
    const head = part.replace(re, '');
    if (head !== '' || !part.startsWith('[')) keys.push(head);
    for (const m of part.matchAll(/\[(\d+)\]/g)) keys.push(m[1] as string);
  }
  return keys;
}

function child(cur: Json | undefined, key: string): Json | undefined {
  if (Array.isArray(cur)) return /^\d+$/.test(key) ? cur[Number(key)] : undefined;
  if (isObject(cur) && Object.hasOwn(cur, key)) return cur[key];
  return undefined;
}

/** A field's value: the key as is without dot notation; with it, an exact key first, then the path. */
export function getField(json: JsonObject, path: string, dotNotation = true): Json | undefined {
  if (Object.hasOwn(json, path)) return json[path];
  if (!dotNotation) return undefined;
  let cur: Json | undefined = json;
  for (const key of pathKeys(path)) {
    cur = child(cur, key);
    if (cur === undefined) return undefined;
  }
  return cur;
}

function checkKey(path: string, key: string): void {
  if (FORBIDDEN.has(key)) throw new Error(`Field name '${path}' is not allowed`);
}

/** Sets a field, creating objects (or arrays before an index) on the way. */
export function setField(target: JsonObject, path: string, value: Json, dotNotation = true): void {
  if (!dotNotation) {
    checkKey(path, path);
    target[path] = value;
    return;
  }
  const keys = pathKeys(path);
  for (const key of keys) checkKey(path, key);
  let cur: JsonObject | Json[] = target;
  keys.forEach((key, i) => {
    const last = i === keys.length - 1;
    const bag = cur as Record<string, Json>;
    if (last) {
      bag[key] = value;
      return;
    }
    const next = bag[key];
    if (next === null || typeof next !== 'object') bag[key] = /^\d+$/.test(keys[i + 1] as string) ? [] : {};
    cur = bag[key] as JsonObject | Json[];
  });
}

/** Removes a field (dot path), leaving its parents. */
export function unsetField(target: JsonObject, path: string, dotNotation = true): void {
  if (!dotNotation || Object.hasOwn(target, path)) {
    delete target[path];
    return;
  }
  const keys = pathKeys(path);
  const last = keys.pop() as string;
  let cur: Json | undefined = target;
  for (const key of keys) cur = child(cur, key);
  if (isObject(cur)) delete cur[last];
}

/** Only the given fields (dot paths), nested as in the source. */
export function pickFields(json: JsonObject, paths: string[]): JsonObject {
  const out: JsonObject = {};
  for (const path of paths) {
    const value = getField(json, path);
    if (value !== undefined) setField(out, path, structuredClone(value));
  }
  return out;
}

/** Leaf paths of an object (`{a:{b:1}}` → `a.b`), as n8n's flattenKeys. */
export function flattenKeys(json: Json, prefix: string[] = [], out: string[] = []): string[] {
  if (json !== null && typeof json === 'object') {
    for (const [k, v] of Object.entries(json)) flattenKeys(v, [...prefix, k], out);
  } else {
    out.push(prefix.join('.'));
  }
  return out;
}

export function isDeepEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => isDeepEqual(v, b[i]));
  }
  const ka = Object.keys(a as JsonObject);
  const kb = Object.keys(b as JsonObject);
  return (
    ka.length === kb.length &&
    ka.every((k) => Object.hasOwn(b, k) && isDeepEqual((a as JsonObject)[k], (b as JsonObject)[k]))
  );
}

/** JSON text with object keys sorted: equal for deeply equal values, whatever their key order. */
export function canonical(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k] as Json)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function toNumber(v: Json | undefined): number {
  if (typeof v === 'number') return v;
  if (v === undefined) return Number.NaN;
  if (v === null) return 0;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (isObject(v)) return Number.NaN;
  return Number(String(v).trim());
}

/** `a < b` as lodash's `lt`: strings compare as strings, anything else as numbers. */
export function lessThan(a: Json | undefined, b: Json | undefined): boolean {
  if (typeof a === 'string' && typeof b === 'string') return a < b;
  return toNumber(a) < toNumber(b);
}

const isEmptyValue = (v: Json | undefined) => v === undefined || v === null || v === '';

/**
 * Merges sources into a copy of `target`: `deep` merges nested objects and arrays key by key (lodash
 * `merge`), otherwise top-level keys are replaced (`assign`). With `keepFilled`, an empty source value
 * (null, '' or missing) does not replace a target value (n8n's "minimize empty fields").
 */
export function mergeJson(
  target: JsonObject,
  sources: JsonObject[],
  mode: { deep: boolean; keepFilled: boolean } = { deep: true, keepFilled: false },
): JsonObject {
  let out: JsonObject = structuredClone(target);
  for (const source of sources) {
    if (mode.deep) out = deepInto(out, source, mode.keepFilled) as JsonObject;
    else
      for (const [k, v] of Object.entries(source)) {
        checkKey(k, k);
        if (mode.keepFilled && isEmptyValue(v) && out[k] !== undefined) continue;
        out[k] = structuredClone(v);
      }
  }
  return out;
}

function deepInto(target: Json | undefined, source: Json, keepFilled: boolean): Json {
  if (source === null || typeof source !== 'object') return source;
  const base: JsonObject | Json[] = Array.isArray(source)
    ? Array.isArray(target)
      ? [...target]
      : []
    : isObject(target)
      ? { ...target }
      : {};
  const bag = base as Record<string, Json>;
  for (const [k, v] of Object.entries(source)) {
    checkKey(k, k);
    if (keepFilled && isEmptyValue(v) && bag[k] !== undefined) continue;
    bag[k] = v !== null && typeof v === 'object' ? deepInto(bag[k], v, keepFilled) : v;
  }
  return base;
}

/** Fields as n8n's data nodes take them: a comma-separated string or a list of names. */
export function fieldList(fields: string | string[] | undefined): string[] {
  if (fields === undefined) return [];
  if (Array.isArray(fields)) return fields;
  return fields
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
}
