import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeGamePlatform } from '../game/fake-game-platform.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createWorkflow, echoFlow } from '../workflows/support.js';

/**
 * Contract fuzz of the whole OpenAPI document: every operation is called with inputs derived from
 * its own schemas — valid-ish values, then the same with fields of the wrong type, missing or
 * unknown, NUL characters, numbers past 2^31 and 2^53, `1e400` literals, invalid UTF-8 and broken
 * JSON in the raw body. Whatever the input: never a 5xx, and every 4xx is the platform's error
 * body with the request id of its header. A fixed number of runs per operation bounds the time;
 * FUZZ_RUNS raises it locally, and a failure prints its seed and smallest input to replay.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
/**
 * FUZZ_SEED replays a failure's run (with the operation's name as the test filter). Under CI the seed
 * is fixed, so a landing is judged on the same inputs every time; locally each run explores new ones.
 */
const SEED = process.env.FUZZ_SEED
  ? Number(process.env.FUZZ_SEED)
  : process.env.CI === 'true'
    ? 20_261_124
    : undefined;
/** FUZZ_STATS=1 prints each operation's statuses: how deep the inputs reach (2xx share). */
const STATS = process.env.FUZZ_STATS === '1';

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema | Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
}

interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  required?: boolean;
  schema: Schema;
}

interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  body: Schema | null;
  /** The response keys the document lists: `404`, `4XX`, … */
  statuses: string[];
}

interface Input {
  path: Record<string, { value: string; raw: boolean }>;
  query: Array<[string, string]>;
  body: { bytes: Buffer; contentType: string } | null;
  auth: 'admin' | 'none' | 'garbage';
}

// ---- the document ---------------------------------------------------------------------------

async function operationsOf(p: TestPlatform): Promise<Operation[]> {
  const res = await p.request({ method: 'GET', url: '/openapi.json' });
  const doc = res.json() as {
    paths: Record<
      string,
      Record<
        string,
        {
          parameters?: Parameter[];
          requestBody?: { content: Record<string, { schema: Schema }> };
          responses?: Record<string, unknown>;
        }
      >
    >;
  };
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      ops.push({
        method: method.toUpperCase(),
        path,
        parameters: op.parameters ?? [],
        body: op.requestBody?.content['application/json']?.schema ?? null,
        statuses: Object.keys(op.responses ?? {}),
      });
    }
  }
  return ops;
}

// ---- values from schemas --------------------------------------------------------------------

const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '%00',
  '..',
  '../../etc/passwd',
  '%zz',
  '\uD800',
  '😀',
  'é✓鍵',
  'x'.repeat(5_000),
  "'; drop table x; --",
  '__proto__',
  'constructor',
  '0x10',
  '1e3',
  ' 1',
  '1.0',
  '-1',
  '99999999999999999999',
  'true',
  'null',
  '[]',
  '{}',
];

const NASTY_NUMBERS = [
  0,
  -1,
  1.5,
  -0.5,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32 + 1,
  -(2 ** 31) - 1,
  2 ** 53 + 2,
  -(2 ** 53) - 2,
  1e21,
  1e300,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
];

const BIG_INTEGERS = [
  2 ** 31 - 1,
  2 ** 31,
  3_000_000_000,
  2 ** 32 + 1,
  Number.MAX_SAFE_INTEGER,
  -(2 ** 31) - 1,
];

const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.constantFrom(...NASTY_NUMBERS),
  fc.constantFrom(...NASTY_STRINGS),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 5 })), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(fc.integer(), fc.string({ maxLength: 5 })), {
    maxKeys: 3,
  }),
);

const ABSENT = Symbol('absent');
const iso = (d: Date) => d.toISOString();
const dates = fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true });

/** Values that (mostly) satisfy the schema: the starting point every mutation departs from. */
function valid(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 8) return fc.jsonValue({ maxDepth: 2 });
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches && branches.length > 0) return fc.oneof(...branches.map((b) => valid(b, depth + 1)));
  if (schema.allOf && schema.allOf.length > 0) return valid(schema.allOf[0], depth + 1);
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((type) => valid({ ...schema, type }, depth)));
  switch (types[0]) {
    case 'object': {
      const props = schema.properties ?? {};
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      const required = new Set(schema.required ?? []);
      // Optional fields are left out two times in three: small bodies pass validation more often.
      for (const [name, prop] of Object.entries(props)) {
        record[name] = required.has(name)
          ? valid(prop, depth + 1)
          : fc.oneof({ weight: 2, arbitrary: fc.constant(ABSENT) }, valid(prop, depth + 1));
      }
      return fc
        .record(record)
        .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== ABSENT)));
    }
    case 'array': {
      if (Array.isArray(schema.items))
        return fc.tuple(...(schema.items as Schema[]).map((s) => valid(s, depth + 1)));
      const min = schema.minItems ?? 0;
      return fc.array(valid(schema.items as Schema | undefined, depth + 1), {
        minLength: min,
        maxLength: Math.max(min, 3),
      });
    }
    case 'string':
      return validString(schema);
    case 'integer': {
      const min = Math.max(schema.minimum ?? -1_000, Number.MIN_SAFE_INTEGER);
      const max = Math.min(schema.maximum ?? Math.max(min, 0) + 1_000, Number.MAX_SAFE_INTEGER);
      // Past 2^31 and 2^53 where the schema allows it: where 32-bit columns and doubles break.
      const edges = BIG_INTEGERS.filter((n) => n >= min && n <= (schema.maximum ?? Number.MAX_SAFE_INTEGER));
      const small = fc.integer({ min, max: Math.max(min, max) });
      return edges.length > 0 ? fc.oneof({ weight: 3, arbitrary: small }, fc.constantFrom(...edges)) : small;
    }
    case 'number': {
      const edges = [...BIG_INTEGERS, 2 ** 53 + 2, 1e21, 1e300, 0.1 + 0.2].filter(
        (n) => n >= (schema.minimum ?? -Number.MAX_VALUE) && n <= (schema.maximum ?? Number.MAX_VALUE),
      );
      const plain = fc.double({
        min: schema.minimum ?? -1e6,
        max: schema.maximum ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
      return edges.length > 0 ? fc.oneof({ weight: 3, arbitrary: plain }, fc.constantFrom(...edges)) : plain;
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function validString(schema: Schema): fc.Arbitrary<string> {
  const maxLength = Math.min(schema.maxLength ?? 30, 30);
  const minLength = Math.min(schema.minLength ?? 0, maxLength);
  if (schema.format === 'date-time') return dates.map(iso);
  if (schema.format === 'date') return dates.map((d) => iso(d).slice(0, 10));
  if (schema.pattern) {
    try {
      const pattern = new RegExp(schema.pattern);
      const upTo = schema.maxLength ?? Number.POSITIVE_INFINITY;
      // Padded to the minimum length where the pattern allows it; the rest are refused (fine too).
      return fc.stringMatching(pattern, { size: 'small' }).map((text) => {
        const padded = text.length < minLength ? text.padEnd(minLength, text.slice(-1) || 'a') : text;
        return pattern.test(padded) && padded.length <= upTo ? padded : text;
      });
    } catch {
      // A pattern fast-check cannot invert: plain strings (mostly refused, which is fine too).
    }
  }
  const plain = fc.string({ minLength, maxLength });
  // Sometimes a real product or variant id, so bodies that name one reach past the look-up.
  return knownStrings.length > 0
    ? fc.oneof({ weight: 3, arbitrary: plain }, fc.constantFrom(...knownStrings))
    : plain;
}

/** Every location inside a value, as a key path, so a mutation can pick one. */
function locations(value: unknown, at: Array<string | number> = [], out: Array<Array<string | number>> = []) {
  out.push(at);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) locations(value[i], [...at, i], out);
  } else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) locations(v, [...at, k], out);
  return out;
}

type Mutation = [pick: number, kind: number, replacement: unknown];

/** Replaces, removes or adds at a location, or slips a NUL into a string. */
function mutate(value: unknown, mutations: Mutation[]): unknown {
  let root = structuredClone(value);
  for (const [pick, kind, replacement] of mutations) {
    const all = locations(root);
    const at = all[pick % all.length] ?? [];
    if (at.length === 0) {
      root = kind === 3 && typeof root === 'string' ? `${root}\u0000` : replacement;
      continue;
    }
    const parent = at
      .slice(0, -1)
      .reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], root) as Record<string | number, unknown>;
    const key = at[at.length - 1] as string | number;
    if (kind === 0) parent[key] = replacement;
    else if (kind === 1 && !Array.isArray(parent)) delete parent[key];
    else if (kind === 2 && !Array.isArray(parent)) parent[`extra${String(key)}`] = replacement;
    else if (typeof parent[key] === 'string') parent[key] = `${parent[key] as string}\u0000`;
    else parent[key] = replacement;
  }
  return root;
}

const mutations = fc.array(fc.tuple(fc.nat(), fc.nat({ max: 3 }), junk), { minLength: 1, maxLength: 3 });

/** A valid-ish value or a mutated one, about half each. */
function fuzzed(schema: Schema | undefined): fc.Arbitrary<unknown> {
  const base = valid(schema);
  return fc.oneof(
    base,
    fc.tuple(base, mutations).map(([v, m]) => mutate(v, m)),
  );
}

// ---- raw bodies -----------------------------------------------------------------------------

const NUMBER_LITERAL = /(?<=[:[,])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?=[,\]}])/;

function bodies(schema: Schema): fc.Arbitrary<{ bytes: Buffer; contentType: string }> {
  const json = 'application/json';
  const asJson = fuzzed(schema).map((v) => JSON.stringify(v) ?? 'null');
  return fc.oneof(
    { weight: 6, arbitrary: asJson.map((text) => ({ bytes: Buffer.from(text), contentType: json })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(asJson, fc.constantFrom('1e400', '-1e400', '123456789012345678901234567890'))
        .map(([text, big]) => ({
          bytes: Buffer.from(NUMBER_LITERAL.test(text) ? text.replace(NUMBER_LITERAL, big) : `{"n":${big}}`),
          contentType: json,
        })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(asJson, fc.nat(), fc.constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80]))
        .map(([text, at, bad]) => {
          const raw = Buffer.from(text);
          const cut = Math.min(at % (raw.length + 1), raw.length);
          return {
            bytes: Buffer.concat([raw.subarray(0, cut), Buffer.from(bad), raw.subarray(cut)]),
            contentType: json,
          };
        }),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          '',
          '{',
          'null',
          '[]',
          '"text"',
          '{"a":1,}',
          '[['.repeat(200),
          '{"__proto__":{"x":1}}',
          '\u0000',
        )
        .map((text) => ({ bytes: Buffer.from(text), contentType: json })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          asJson,
          fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream'),
        )
        .map(([text, contentType]) => ({ bytes: Buffer.from(text), contentType })),
    },
  );
}

/** Wildcard routes: their one path parameter is the rest of the path, slashes included. */
const WILDCARDS = new Set(['/webhook/{path}', '/mcp/{path}', '/v1/models/{model}']);
const WEBHOOK_PARAM = 'path';

// ---- parameters -----------------------------------------------------------------------------

/** Ids the platform handed out during the run: path parameters sometimes name a real resource. */
const knownIds: string[] = [];
/** Ids of the catalogue, offered as string values in bodies and queries. */
const knownStrings: string[] = [];
/** Ids a fuzzed call must never touch: the key every call is made with. */
const protectedIds = new Set<string>();

const asText = (v: unknown) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));

/** A value valid for the parameter, or a resource the platform handed out. */
function cleanPathValue(param: Parameter): fc.Arbitrary<{ value: string; raw: boolean }> {
  const known = param.name === WEBHOOK_PARAM ? fc.constant('fuzz-hook') : fc.nat().map((i) => `known:${i}`);
  return fc.oneof(valid(param.schema).map(asText), known).map((value) => ({ value, raw: false }));
}

function pathValue(param: Parameter): fc.Arbitrary<{ value: string; raw: boolean }> {
  return fc.oneof(
    { weight: 3, arbitrary: valid(param.schema).map((v) => ({ value: asText(v), raw: false })) },
    { weight: 3, arbitrary: fc.nat().map((i) => ({ value: `known:${i}`, raw: false })) },
    { weight: 2, arbitrary: junk.map((v) => ({ value: asText(v), raw: false })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('..', '%zz', '%00', 'a/b', '%2e%2e').map((value) => ({ value, raw: true })),
    },
  );
}

function queryPairs(params: Parameter[]): fc.Arbitrary<Array<[string, string]>> {
  const declared = params.filter((q) => q.in === 'query');
  const one = (q: Parameter) =>
    fc.option(
      fc.oneof(
        { weight: 3, arbitrary: valid(q.schema).map(asText) },
        { weight: 2, arbitrary: junk.map(asText) },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            '0x10',
            '1e3',
            ' 1',
            '1.0',
            '+1',
            '-0',
            '2147483648',
            '9007199254740993',
          ),
        },
      ),
      { freq: 3 },
    );
  return fc
    .tuple(
      fc.tuple(
        ...declared.map((q) => one(q).map((v) => (v === null ? [] : [[q.name, v] as [string, string]]))),
      ),
      fc.array(fc.tuple(fc.constantFrom('extra', 'limit', 'sort', 'name', '__proto__'), junk.map(asText)), {
        maxLength: 2,
      }),
    )
    .map(([fixed, extra]) => [...fixed.flat(), ...extra]);
}

/** Half the runs are clean (schema-valid, with the admin key) to reach handlers and storage. */
function inputs(op: Operation): fc.Arbitrary<Input> {
  return fc.oneof(cleanInputs(op), dirtyInputs(op));
}

function cleanInputs(op: Operation): fc.Arbitrary<Input> {
  const pathParams = op.parameters.filter((q) => q.in === 'path');
  const query = op.parameters
    .filter((q) => q.in === 'query')
    .map((q) =>
      q.required
        ? valid(q.schema).map((v) => [[q.name, asText(v)]])
        : fc
            .option(
              valid(q.schema).map((v) => [[q.name, asText(v)]]),
              { freq: 3 },
            )
            .map((v) => v ?? []),
    );
  return fc.record({
    path: fc.record(Object.fromEntries(pathParams.map((q) => [q.name, cleanPathValue(q)]))),
    query: fc.tuple(...query).map((pairs) => pairs.flat() as Array<[string, string]>),
    body: op.body
      ? valid(op.body).map((v) => ({
          bytes: Buffer.from(JSON.stringify(v) ?? 'null'),
          contentType: 'application/json',
        }))
      : fc.constant(null),
    auth: fc.constant('admin'),
  }) as fc.Arbitrary<Input>;
}

function dirtyInputs(op: Operation): fc.Arbitrary<Input> {
  const pathParams = op.parameters.filter((q) => q.in === 'path');
  return fc.record({
    path: fc.record(Object.fromEntries(pathParams.map((q) => [q.name, pathValue(q)]))),
    query: queryPairs(op.parameters),
    body: op.body ? fc.option(bodies(op.body), { freq: 8 }) : fc.constant(null),
    auth: fc.constantFrom('admin', 'admin', 'admin', 'admin', 'admin', 'admin', 'none', 'garbage'),
  }) as fc.Arbitrary<Input>;
}

/** Percent-encodes text (lone surrogates become U+FFFD, as any client's UTF-8 encoder does). */
const encode = (text: string) => encodeURIComponent(Buffer.from(text, 'utf8').toString('utf8'));

function urlOf(op: Operation, input: Input): string {
  let path = op.path;
  for (const [name, { value, raw }] of Object.entries(input.path)) {
    let text = value;
    const known = /^known:(\d+)$/.exec(value);
    if (known) text = knownIds.length > 0 ? (knownIds[Number(known[1]) % knownIds.length] as string) : 'none';
    // A wildcard's slashes are path separators (`/webhook/a/b`), not part of one segment.
    const wildcard = WILDCARDS.has(op.path) && path.endsWith(`{${name}}`);
    const segment = raw ? text : wildcard ? text.split('/').map(encode).join('/') : encode(text);
    path = path.replace(`{${name}}`, segment);
  }
  const query = input.query.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
  return query ? `${path}?${query}` : path;
}

// ---- the contract ---------------------------------------------------------------------------

function describeCall(op: Operation, url: string, input: Input, res: LightMyRequestResponse): string {
  const body = input.body
    ? `${input.body.contentType} ${JSON.stringify(input.body.bytes.toString('latin1').slice(0, 300))}`
    : '-';
  return `${op.method} ${url}\n  auth: ${input.auth}\n  body: ${body}\n  → ${res.statusCode} ${res.body.slice(0, 300)}`;
}

const OLLAMA_PATHS = new Set(
  [
    'chat',
    'generate',
    'embed',
    'embeddings',
    'tags',
    'show',
    'version',
    'ps',
    'pull',
    'create',
    'copy',
    'delete',
    'push',
    'blobs/{digest}',
  ].map((p) => `/api/${p}`),
);
/** The MCP transport answers its own refusals (and protocol errors) as JSON-RPC errors, as the SDK does. */
const JSON_RPC_PATHS = new Set(['/mcp', '/mcp/{path}']);
const OPENAI_PATHS = new Set([
  '/v1/chat/completions',
  '/v1/completions',
  '/v1/embeddings',
  '/v1/moderations',
  '/v1/models',
  '/v1/models/{model}',
  '/v1/files',
  '/v1/files/{file_id}',
  '/v1/files/{file_id}/content',
  '/v1/batches',
  '/v1/batches/{batch_id}',
  '/v1/batches/{batch_id}/cancel',
  '/v1/responses',
  '/v1/responses/{id}',
]);
const ANTHROPIC_PATHS = new Set(['/v1/messages', '/v1/messages/count_tokens']);

const DOT_SEGMENT = /\/(\.|%2e){0,2}(\/|$)/i;
const DOTS_SEGMENT = /\/(\.|%2e){1,2}(\/|$)/i;

function checkContract(op: Operation, url: string, input: Input, res: LightMyRequestResponse): void {
  const call = describeCall(op, url, input, res);
  // A pull goes to the Ollama server, which this run does not start: its absence is the upstream's
  // 502, not the platform failing on the input.
  const upstreamDown =
    op.path === '/api/pull' && res.statusCode === 502 && res.json().code === 'UPSTREAM_ERROR';
  if (!upstreamDown) expect(res.statusCode, `5xx\n${call}`).toBeLessThan(500);
  // Clients generated from the document know only the statuses it lists. An empty or dot segment
  // names another path (`/api/cart/items/..` is `/api/cart/`): that path's statuses, not this one's.
  const status = String(res.statusCode);
  const listed = op.statuses.includes(status) || op.statuses.includes(`${status[0]}XX`);
  if (!DOT_SEGMENT.test(url.split('?')[0] ?? ''))
    expect(listed, `status ${status} is not in the document\n${call}`).toBe(true);
  if (res.statusCode < 400 || op.method === 'HEAD') return;
  let body: Record<string, unknown>;
  try {
    body = res.json() as Record<string, unknown>;
  } catch {
    throw new Error(`4xx body is not JSON\n${call}`);
  }
  // Compatible surfaces answer in their product's error body, the platform's fields beside it.
  // A path the router refused before finding the route (`/v1/models/..`, bad percent-encoding) is no
  // longer theirs: the platform answers it.
  // A `.` or `..` segment names another path whatever the answer (`?sort=%00` is refused before any
  // route); an empty one (a trailing slash) still reaches this route.
  if (JSON_RPC_PATHS.has(op.path) && body.jsonrpc === '2.0') {
    expect(body, `JSON-RPC error shape\n${call}`).toMatchObject({
      error: { code: expect.any(Number), message: expect.any(String) },
    });
    return;
  }
  const unrouted =
    body.code === 'ROUTE_NOT_FOUND' ||
    DOTS_SEGMENT.test(url.split('?')[0] ?? '') ||
    /percent-encoding|path parameter/.test(String(body.message));
  // An unrouted path is answered by whichever surface owns its prefix (Ollama's `/api/`, OpenAI's
  // `/v1/`: their error field) or by the platform (`error: true`); the platform's fields are there.
  const error = unrouted
    ? expect.anything()
    : OLLAMA_PATHS.has(op.path)
      ? expect.any(String)
      : OPENAI_PATHS.has(op.path)
        ? { message: expect.any(String), type: expect.any(String), code: expect.any(String) }
        : ANTHROPIC_PATHS.has(op.path)
          ? { message: expect.any(String), type: expect.any(String) }
          : true;
  expect(body, `4xx shape\n${call}`).toMatchObject({
    error,
    code: expect.any(String),
    message: expect.any(String),
    requestId: expect.any(String),
  });
  expect(body.requestId, `request id header\n${call}`).toBe(res.headers['x-request-id']);
}

// ---- the run --------------------------------------------------------------------------------

const game = await new FakeGamePlatform().start();
const envFor = () => ({ ...game.env(), OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost' });
// The document is the same on every database: read it once to name one test per operation.
const probe = await createTestPlatform({ dialect: 'sqlite', env: envFor() });
const operations = await operationsOf(probe);
await probe.close();

afterAll(() => game.stop());

describe.each(await testDialects())('OpenAPI contract fuzz on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect, env: envFor() });
    knownIds.length = 0;
    knownStrings.length = 0;
    protectedIds.clear();
    const products = (await p.request({ method: 'GET', url: '/v1/products?limit=20' })).json() as {
      data: Array<{ id: string; variants?: Array<{ id: string }> }>;
    };
    for (const product of products.data) {
      knownStrings.push(product.id);
      for (const variant of product.variants ?? []) knownStrings.push(variant.id);
    }
    const own = (await p.request({ method: 'GET', url: '/v1/api-keys?limit=200' })).json() as {
      data: Array<{ id: string }>;
    };
    for (const k of own.data) protectedIds.add(k.id);
    // Real resources to aim at: a spare key and a workflow (either may be deleted by the fuzz),
    // and an active webhook workflow kept out of reach of id parameters, so /webhook/fuzz-hook runs.
    knownIds.push(
      (await p.createKey({ name: 'spare', type: 'development', services: ['core'], role: 'Reader' })).id,
    );
    knownIds.push(await createWorkflow(p, echoFlow('fuzz-spare')));
    const hook = await createWorkflow(p, echoFlow('fuzz-hook'));
    await activate(p, hook);
    protectedIds.add(hook);
  });
  afterAll(() => p?.close());

  it('covers every operation of the document', async () => {
    const again = await operationsOf(p);
    expect(again.map((o) => `${o.method} ${o.path}`)).toEqual(operations.map((o) => `${o.method} ${o.path}`));
    expect(operations.length).toBeGreaterThan(50);
  });

  for (const op of operations) {
    it(`${op.method} ${op.path}`, async () => {
      const statuses = new Map<number, number>();
      await fc.assert(
        fc.asyncProperty(inputs(op), async (input) => {
          const url = urlOf(op, input);
          // Never revoke, rotate or restrict the key the fuzz itself runs with.
          if ([...protectedIds].some((id) => url.includes(id))) return;
          const headers: Record<string, string> = {};
          if (input.body) headers['content-type'] = input.body.contentType;
          const res = await p.request({
            method: op.method as 'GET',
            url,
            headers,
            ...(input.body ? { payload: input.body.bytes } : {}),
            key: input.auth === 'admin' ? undefined : input.auth === 'none' ? null : 'PROD_API_garbage',
          });
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          checkContract(op, url, input, res);
          if (res.statusCode < 300 && res.body.startsWith('{')) {
            const id = (res.json() as { id?: unknown }).id;
            if (typeof id === 'string' && !knownIds.includes(id)) knownIds.push(id);
          }
        }),
        { numRuns: RUNS, endOnFailure: true, ...(SEED === undefined ? {} : { seed: SEED }) },
      );
      if (STATS) console.log(dialect, op.method, op.path, JSON.stringify(Object.fromEntries(statuses)));
    });
  }
});
