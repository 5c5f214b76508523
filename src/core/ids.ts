import { monotonicFactory } from 'ulidx';

const ulid = monotonicFactory();

/** Prefixed, time-sortable ids (`key_01JD…`): lexical order is creation order, so lists page by key. */
export function newId(prefix: string): string {
  return `${prefix}_${ulid().toLowerCase()}`;
}

export function hasPrefix(id: string, prefix: string): boolean {
  return id.startsWith(`${prefix}_`) && id.length === prefix.length + 27;
}
