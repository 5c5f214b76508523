import type { Item, Json, NodeContext } from '../../../engine/types.js';

/**
 * What Split In Batches keeps in its node context between runs, shared by every version: items are
 * stored as `{ json }` values and read back as items.
 */
export const toJson = (item: Item): Json => ({ json: item.json });

/** An item this node stored in its context (always `{ json: {…} }`). */
export function toItem(value: Json): Item {
  const json = isObject(value) ? value.json : undefined;
  return { json: isObject(json) ? json : {} };
}

/** The list under `key` of the context, made one if the stored value is not. */
export function listAt(c: NodeContext, key: string): Json[] {
  const value = c[key];
  if (Array.isArray(value)) return value;
  const list: Json[] = [];
  c[key] = list;
  return list;
}

export const isObject = (v: Json | undefined): v is { [key: string]: Json } =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
