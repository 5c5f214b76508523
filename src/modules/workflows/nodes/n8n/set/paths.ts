import { NodeOperationError } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';

/**
 * Field paths as n8n's Set node reads them (lodash `get`/`set`/`unset`): `a.b`, `list[1]`,
 * `a["x.y"]`; a name that is already a key of the object is taken whole. With dot notation off a
 * name is always one key. Prototype keys are refused, so an item cannot reach Object.prototype.
 */

const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);
const SEGMENT = /[^.[\]]+|\[(?:(\d+)|(["'])((?:(?!\2)[^\\]|\\.)*?)\2)\]/g;

type Container = Record<string, Json> | Json[];

function toPath(name: string, target: unknown, dotNotation: boolean): string[] {
  const whole =
    !dotNotation ||
    !/[.[]/.test(name) ||
    (target !== null && typeof target === 'object' && Object.hasOwn(target, name));
  const keys = whole ? [name] : [...name.matchAll(SEGMENT)].map((m) => m[1] ?? m[3] ?? m[0]);
  for (const key of keys) {
    if (FORBIDDEN.has(key)) throw new NodeOperationError(`Field name '${name}' is not allowed`);
  }
  return keys;
}

const isContainer = (v: unknown): v is Container => v !== null && typeof v === 'object';

export function getPath(target: Record<string, Json>, name: string, dotNotation: boolean): Json | undefined {
  let cur: unknown = target;
  for (const key of toPath(name, target, dotNotation)) {
    if (!isContainer(cur) || !Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, Json>)[key];
  }
  return cur as Json | undefined;
}

/** Sets the value, creating objects (or arrays, before an index) on the way, as lodash `set`. */
export function setPath(target: Record<string, Json>, name: string, value: Json, dotNotation: boolean): void {
  const keys = toPath(name, target, dotNotation);
  let cur: Container = target;
  keys.forEach((key, i) => {
    const slot = cur as Record<string, Json>;
    if (i === keys.length - 1) {
      slot[key] = value;
      return;
    }
    const next = slot[key];
    if (!isContainer(next)) slot[key] = /^\d+$/.test(keys[i + 1] ?? '') ? [] : {};
    cur = slot[key] as Container;
  });
}

export function unsetPath(target: Record<string, Json>, name: string, dotNotation: boolean): void {
  const keys = toPath(name, target, dotNotation);
  let cur: unknown = target;
  for (const key of keys.slice(0, -1)) {
    if (!isContainer(cur) || !Object.hasOwn(cur, key)) return;
    cur = (cur as Record<string, Json>)[key];
  }
  const last = keys[keys.length - 1];
  if (isContainer(cur) && last !== undefined) delete (cur as Record<string, Json>)[last];
}
