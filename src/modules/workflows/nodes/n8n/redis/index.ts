import type { Redis } from 'ioredis';
import { Type } from 'typebox';
import {
  defineNode,
  type NodeExecutionContext,
  NodeOperationError,
  output,
} from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { boundsOf, type QueryBounds, timedOut, tooManyRows } from '../sql/bounds.js';
import { nodeCredential } from '../sql/credential.js';
import { redisClient } from './client.js';

const KeyType = Type.Enum(['automatic', 'hash', 'list', 'sets', 'string'] as const, { default: 'automatic' });

const RedisParameters = Type.Object(
  {
    operation: Type.Enum(
      ['delete', 'get', 'incr', 'info', 'keys', 'pop', 'publish', 'push', 'set'] as const,
      {
        default: 'info',
      },
    ),
    key: Type.String({ default: '', maxLength: 10_000 }),
    keyType: KeyType,
    value: Type.Unknown({ default: '' }),
    valueIsJSON: Type.Boolean({ default: true }),
    expire: Type.Boolean({ default: false }),
    ttl: Type.Number({ default: 60 }),
    propertyName: Type.String({ default: 'propertyName', maxLength: 1_000 }),
    keyPattern: Type.String({ default: '', maxLength: 10_000 }),
    getValues: Type.Boolean({ default: true }),
    channel: Type.String({ default: '', maxLength: 10_000 }),
    messageData: Type.Unknown({ default: '' }),
    list: Type.String({ default: '', maxLength: 10_000 }),
    tail: Type.Boolean({ default: false }),
    options: Type.Object(
      {
        dotNotation: Type.Optional(Type.Boolean()),
        // The platform's bounds: seconds a command may take, keys a `keys` run may return.
        queryTimeout: Type.Optional(Type.Number({ minimum: 0, maximum: 3_600 })),
        maxRows: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

type Params = {
  operation: string;
  key: string;
  keyType: 'automatic' | 'hash' | 'list' | 'sets' | 'string';
  value: unknown;
  valueIsJSON: boolean;
  expire: boolean;
  ttl: number;
  propertyName: string;
  keyPattern: string;
  getValues: boolean;
  channel: string;
  messageData: unknown;
  list: string;
  tail: boolean;
  options: { dotNotation?: boolean; queryTimeout?: number; maxRows?: number };
};

/** A command, failed after the bound rather than waited for. */
async function bounded<T>(work: Promise<T>, bounds: QueryBounds): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(timedOut(bounds.timeoutMs)), bounds.timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** n8n's getValue: by the key's type (automatic asks Redis). */
async function getValue(r: Redis, key: string, keyType: Params['keyType']): Promise<Json> {
  const type = keyType === 'automatic' ? await r.type(key) : keyType === 'sets' ? 'set' : keyType;
  if (type === 'string') return r.get(key);
  if (type === 'hash') return r.hgetall(key);
  if (type === 'list') return r.lrange(key, 0, -1);
  if (type === 'set') return r.smembers(key);
  return null;
}

/** n8n's setValue: a string, a hash (object or JSON), a list or a set (each element pushed). */
async function setValue(r: Redis, p: Params): Promise<void> {
  const { key } = p;
  let type = p.keyType;
  const value = p.value;
  if (type === 'automatic') {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') type = 'string';
    else if (Array.isArray(value)) type = 'list';
    else if (value !== null && typeof value === 'object') type = 'hash';
    else type = 'string';
  }
  if (type === 'string') await r.set(key, String(value ?? ''));
  else if (type === 'hash') {
    let fields = value;
    if (typeof value === 'string' && p.valueIsJSON) {
      try {
        fields = JSON.parse(value);
      } catch {
        throw new NodeOperationError('The hash value is not valid JSON');
      }
    }
    if (fields === null || typeof fields !== 'object')
      throw new NodeOperationError('A hash needs an object value');
    const entries = Object.entries(fields as Record<string, unknown>).map(([k, v]) => [
      k,
      typeof v === 'object' ? JSON.stringify(v) : String(v),
    ]);
    if (entries.length > 0) await r.hset(key, Object.fromEntries(entries));
  } else {
    const list = Array.isArray(value) ? value : typeof value === 'string' ? listOf(value) : [value];
    const members = list.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v)));
    if (members.length > 0) {
      if (type === 'list') await r.rpush(key, ...members);
      else await r.sadd(key, ...members);
    }
  }
  if (p.expire && p.ttl > 0) await r.expire(key, p.ttl);
}

function listOf(text: string): unknown[] {
  try {
    const parsed = JSON.parse(text) as unknown;
    return Array.isArray(parsed) ? parsed : [parsed];
  } catch {
    return [text];
  }
}

/** n8n's info output: `key:value` lines, `a=1,b=2` values as objects, numbers as numbers. */
function infoObject(info: string): Record<string, Json> {
  const out: Record<string, Json> = {};
  const typed = (v: string): Json => (/^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v);
  for (const line of info.split('\n')) {
    if (line.startsWith('#') || !line.includes(':')) continue;
    const at = line.indexOf(':');
    const key = line.slice(0, at);
    const value = line.slice(at + 1).trim();
    if (value.includes('=')) {
      const obj: Record<string, Json> = {};
      for (const pair of value.split(',')) {
        const [k, v] = pair.split('=');
        if (k !== undefined) obj[k] = typed(v ?? '');
      }
      out[key] = obj;
    } else out[key] = typed(value);
  }
  return out;
}

/** Sets `path` in `target`: a dotted path unless dotNotation is off (n8n's lodash set). */
function setPath(target: Record<string, Json>, path: string, value: Json, dotNotation: boolean): void {
  if (!dotNotation) {
    target[path] = value;
    return;
  }
  const parts = path.split('.');
  let at: Record<string, Json> = target;
  for (const part of parts.slice(0, -1)) {
    const next = at[part];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) at[part] = {};
    at = at[part] as Record<string, Json>;
  }
  at[parts.at(-1) as string] = value;
}

/** Keys matching the pattern, by SCAN (never KEYS), at most `maxRows`. */
async function scanKeys(r: Redis, pattern: string, maxRows: number): Promise<string[]> {
  const keys = new Set<string>();
  let cursor = '0';
  do {
    const [next, found] = await r.scan(cursor, 'MATCH', pattern, 'COUNT', 1_000);
    for (const k of found) keys.add(k);
    if (keys.size > maxRows) throw tooManyRows(maxRows);
    cursor = next;
  } while (cursor !== '0');
  return [...keys];
}

async function runItem(r: Redis, p: Params, item: Item, bounds: QueryBounds): Promise<Item> {
  const dot = p.options.dotNotation !== false;
  switch (p.operation) {
    case 'delete':
      await r.del(p.key);
      return item;
    case 'get': {
      const json: Record<string, Json> = {};
      setPath(json, p.propertyName, (await getValue(r, p.key, p.keyType)) ?? null, dot);
      return { json };
    }
    case 'set':
      await setValue(r, p);
      return item;
    case 'incr': {
      const value = await r.incr(p.key);
      if (p.expire && p.ttl > 0) await r.expire(p.key, p.ttl);
      return { json: { [p.key]: value } };
    }
    case 'keys': {
      const keys = await scanKeys(r, p.keyPattern, bounds.maxRows);
      if (!p.getValues) return { json: { keys } };
      const json: Record<string, Json> = {};
      for (const k of keys) json[k] = await getValue(r, k, 'automatic');
      return { json };
    }
    case 'publish':
      await r.publish(
        p.channel,
        typeof p.messageData === 'string' ? p.messageData : JSON.stringify(p.messageData),
      );
      return item;
    case 'push': {
      const data = typeof p.messageData === 'string' ? p.messageData : JSON.stringify(p.messageData);
      if (p.tail) await r.rpush(p.list, data);
      else await r.lpush(p.list, data);
      return item;
    }
    case 'pop': {
      const value = p.tail ? await r.rpop(p.list) : await r.lpop(p.list);
      let out: Json = value;
      try {
        out = value === null ? null : (JSON.parse(value) as Json);
      } catch {
        out = value;
      }
      const json: Record<string, Json> = {};
      setPath(json, p.propertyName, out, dot);
      return { json };
    }
    default:
      throw new NodeOperationError(`The operation '${p.operation}' is not known`);
  }
}

/**
 * n8n's Redis node (v1): get, set (string, hash, list, set; with a TTL), incr, keys (by SCAN,
 * bounded), delete, publish, push, pop, info — with the node's `redis` credential through the
 * outbound guard; every command bounded in time.
 */
export const redisNode = defineNode({
  type: 'n8n-nodes-base.redis',
  versions: [1],
  schema: RedisParameters,
  async execute(ctx) {
    const credential = await nodeCredential(ctx as NodeExecutionContext<unknown>, 'redis');
    const first = (await ctx.params(0)) as Params;
    const bounds = boundsOf(first.options, ctx.deadlineAt);
    const r = await bounded(redisClient(credential, ctx.deps.connectAddress), bounds);
    if (first.operation === 'info') return output([{ json: infoObject(await bounded(r.info(), bounds)) }]);
    const out: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      try {
        const p = (i === 0 ? first : await ctx.params(i)) as Params;
        out.push({ ...(await bounded(runItem(r, p, item, bounds), bounds)), pairedItem: { item: i } });
      } catch (err) {
        if (ctx.node.continueOnFail !== true) throw err;
        out.push({ json: { error: (err as Error).message }, pairedItem: { item: i } });
      }
    }
    return output(out);
  },
});
