import { GAME_ENDPOINTS } from './endpoint-table.js';
import type { GameEndpoint } from './endpoint-types.js';

/** An endpoint matched by a request path, with its path parameters (decoded, unvalidated). */
export interface EndpointMatch {
  endpoint: GameEndpoint;
  params: Record<string, string>;
}

interface Compiled {
  endpoint: GameEndpoint;
  /** Literal text, or null for a parameter (its name in `names`). */
  literals: ReadonlyArray<string | null>;
  names: ReadonlyArray<string | null>;
}

function compile(endpoint: GameEndpoint): Compiled {
  const parts = endpoint.path.split('/').filter(Boolean);
  return {
    endpoint,
    literals: parts.map((p) => (/^\{\w+\}$/.test(p) ? null : p)),
    names: parts.map((p) => /^\{(\w+)\}$/.exec(p)?.[1] ?? null),
  };
}

/** Templates by method and segment count; within a bucket the most literal first (left to right). */
function buckets(): Map<string, Compiled[]> {
  const map = new Map<string, Compiled[]>();
  for (const endpoint of GAME_ENDPOINTS) {
    const c = compile(endpoint);
    const key = `${endpoint.method} ${c.literals.length}`;
    map.set(key, [...(map.get(key) ?? []), c]);
  }
  const rank = (c: Compiled) => c.literals.map((l) => (l === null ? '1' : '0')).join('');
  // A plain comparison: the ranks are '0'/'1' strings, and localeCompare's first call builds an ICU
  // collator (tens of milliseconds of every start).
  for (const list of map.values()) list.sort((a, b) => (rank(a) < rank(b) ? -1 : rank(a) > rank(b) ? 1 : 0));
  return map;
}

const BY_SHAPE = buckets();

/**
 * The endpoint of a request path (segments after `/game/`, decoded one by one, the trailing
 * slash dropped). A literal segment beats a parameter at the first place they differ, as the
 * upstream's own routing does (`Destiny2/Manifest/…` is the manifest, not a membership type).
 */
export function matchEndpoint(method: string, segments: readonly string[]): EndpointMatch | null {
  for (const c of BY_SHAPE.get(`${method} ${segments.length}`) ?? []) {
    if (!c.literals.every((l, i) => l === null || l === segments[i])) continue;
    const params: Record<string, string> = {};
    c.names.forEach((name, i) => {
      if (name) params[name] = segments[i] ?? '';
    });
    return { endpoint: c.endpoint, params };
  }
  return null;
}

/** Whether any endpoint has this path under another method (405 rather than 404). */
export function otherMethod(method: string, segments: readonly string[]): string | null {
  const other = method === 'GET' ? 'POST' : 'GET';
  return matchEndpoint(other, segments) ? other : null;
}

export function endpointByName(name: string): GameEndpoint | undefined {
  return GAME_ENDPOINTS.find((e) => e.name === name);
}
