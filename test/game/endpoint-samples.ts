import { GAME_BODY_SCHEMAS } from '../../src/modules/game/endpoint-bodies.js';
import type { GameEndpoint, GameParam } from '../../src/modules/game/endpoint-types.js';

interface Schema {
  type?: string;
  enum?: unknown[];
  anyOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
}

/** A valid value of a parameter, as a caller writes it in a URL. */
export function sampleParam(param: GameParam): string {
  const one = (i: number): string => {
    switch (param.type) {
      case 'number':
        return String(40 + i);
      case 'enum':
        return String(param.enum?.[Math.min(i, (param.enum?.length ?? 1) - 1)] ?? 0);
      case 'boolean':
        return i === 0 ? 'true' : 'false';
      default:
        // Ids are int64 numbers written as strings; dates are ISO 8601.
        if (/(^id|Id)$/.test(param.name)) return `46116860184670${i}0123`;
        if (/^(start|end|daystart|dayend)$/.test(param.name)) return `2026-01-0${i + 1}T00:00:00Z`;
        // Characters that must stay inside their segment or value, encoded.
        return i === 0 ? `v ä?#%${param.name}` : `w${i}`;
    }
  };
  return param.list ? `${one(0)},${one(1)}` : one(0);
}

/** A valid JSON body of a request type (every property, so every field is forwarded). */
export function sampleBody(type: string): unknown {
  return sampleOf(GAME_BODY_SCHEMAS[type] as Schema);
}

function sampleOf(schema: Schema): unknown {
  if (schema.enum) return schema.enum[schema.enum.length - 1];
  if (schema.anyOf?.[0]) return sampleOf(schema.anyOf[0]);
  switch (schema.type) {
    case 'string':
      return 'text';
    case 'number':
    case 'integer':
      return 7;
    case 'boolean':
      return true;
    case 'array':
      return schema.items ? [sampleOf(schema.items)] : [];
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, sampleOf(v)]));
    default:
      return null;
  }
}

/** The call a caller makes and what the upstream must then receive. */
export function sampleCall(endpoint: GameEndpoint): {
  url: string;
  upstreamPath: string;
  query: Record<string, string>;
  body: unknown;
} {
  let url = '/game';
  let upstreamPath = '/Platform';
  const params = new Map(endpoint.pathParams.map((p) => [p.name, sampleParam(p)]));
  for (const part of endpoint.path.split('/').filter(Boolean)) {
    const name = /^\{(\w+)\}$/.exec(part)?.[1];
    const value = name ? (params.get(name) ?? '') : part;
    url += `/${encodeURIComponent(value)}`;
    upstreamPath += `/${encodeURIComponent(value)}`;
  }
  upstreamPath += '/';
  const query = Object.fromEntries(endpoint.query.map((q) => [q.name, sampleParam(q)]));
  const search = new URLSearchParams(query).toString();
  return {
    url: `${url}/${search ? `?${search}` : ''}`,
    upstreamPath,
    query,
    body: endpoint.body ? sampleBody(endpoint.body) : undefined,
  };
}
