/**
 * Examples for the OpenAPI document, generated from the schemas: deterministic (the same document
 * every time, so the generated client and its staleness check are stable) and valid against the
 * schema they come from (Redocly's no-invalid-media-type-examples; test/core/openapi-rules checks
 * each with Ajv). The smallest valid value: required properties only, one item per array, lower
 * bounds, the first enum member, the first branch of a union.
 */

type Schema = Record<string, unknown>;
/** A local `$ref` (`#/components/schemas/Error`) to the schema it names. */
export type RefResolver = (ref: string) => unknown;

const FORMATS: Record<string, string> = {
  'date-time': '2025-01-01T00:00:00.000Z',
  date: '2025-01-01',
  time: '00:00:00Z',
  email: 'user@example.com',
  uri: 'https://example.com',
  url: 'https://example.com',
  'uri-reference': '/',
  uuid: '00000000-0000-4000-8000-000000000000',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
};

/** Past this depth a recursive schema stops: objects and arrays come out empty. */
const MAX_DEPTH = 12;

const isSchema = (value: unknown): value is Schema =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
const numberOf = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** A value valid against `schema`: see the file comment for which one. */
export function sampleOf(schema: unknown, resolve: RefResolver = () => undefined, depth = 0): unknown {
  if (!isSchema(schema)) return null;
  if (typeof schema.$ref === 'string') return sampleOf(resolve(schema.$ref), resolve, depth + 1);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('example' in schema) return schema.example;
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (Array.isArray(schema.allOf)) return sampleAllOf(schema.allOf, resolve, depth);
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches) && branches.length > 0) {
    const notNull = branches.find((b) => !(isSchema(b) && b.type === 'null'));
    return sampleOf(notNull ?? branches[0], resolve, depth + 1);
  }
  switch (typeOf(schema)) {
    case 'object':
      return depth > MAX_DEPTH ? {} : sampleObject(schema, resolve, depth);
    case 'array':
      return depth > MAX_DEPTH ? [] : sampleArray(schema, resolve, depth);
    case 'string':
      return sampleString(schema);
    case 'integer':
      return sampleNumber(schema, true);
    case 'number':
      return sampleNumber(schema, false);
    case 'boolean':
      return true;
    default:
      return null;
  }
}

function typeOf(schema: Schema): string | undefined {
  const types = [schema.type].flat().filter((t): t is string => typeof t === 'string');
  const type = types.find((t) => t !== 'null') ?? types[0];
  if (type) return type;
  if (isSchema(schema.properties) || Array.isArray(schema.required)) return 'object';
  if (schema.items !== undefined || Array.isArray(schema.prefixItems)) return 'array';
  return undefined;
}

/** An intersection of objects: each part's required properties together. */
function sampleAllOf(parts: unknown[], resolve: RefResolver, depth: number): unknown {
  const samples = parts.map((part) => sampleOf(part, resolve, depth + 1));
  if (samples.every(isSchema)) return Object.assign({}, ...samples);
  return samples.at(-1) ?? null;
}

function sampleObject(schema: Schema, resolve: RefResolver, depth: number): Schema {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const extra = schema.additionalProperties;
  const names = Array.isArray(schema.required) ? schema.required.filter((n) => typeof n === 'string') : [];
  // minProperties (a PATCH body that must change something): the first optional properties too.
  const wanted = numberOf(schema.minProperties) ?? 0;
  for (const name of Object.keys(properties))
    if (names.length < wanted && !names.includes(name)) names.push(name);
  for (let i = 1; names.length < wanted && extra !== false; i++) names.push(`key${i}`);
  const out: Schema = {};
  for (const name of names)
    out[name] = sampleOf(properties[name] ?? (isSchema(extra) ? extra : {}), resolve, depth + 1);
  return out;
}

function sampleArray(schema: Schema, resolve: RefResolver, depth: number): unknown[] {
  // A tuple: `prefixItems` (2020-12), or the draft-07 array form of `items` TypeBox writes.
  const tuple = Array.isArray(schema.items) ? schema.items : schema.prefixItems;
  const out = (Array.isArray(tuple) ? tuple : []).map((item) => sampleOf(item, resolve, depth + 1));
  if (Array.isArray(schema.items) || schema.items === false) return out;
  const wanted = Math.min(Math.max(1, numberOf(schema.minItems) ?? 0), numberOf(schema.maxItems) ?? Infinity);
  while (out.length < wanted) out.push(sampleOf(schema.items, resolve, depth + 1));
  return out;
}

function sampleNumber(schema: Schema, integer: boolean): number {
  const step = numberOf(schema.multipleOf) ?? 1;
  const exclusiveMin = numberOf(schema.exclusiveMinimum);
  const max = numberOf(schema.maximum) ?? numberOf(schema.exclusiveMaximum);
  let value = numberOf(schema.minimum) ?? (exclusiveMin !== undefined ? exclusiveMin + step : 0);
  if (numberOf(schema.minimum) === undefined && exclusiveMin === undefined && max !== undefined && max < 0)
    value = max;
  if (integer) value = Math.ceil(value);
  // Rounded to the step's decimals: 0.1 * 3 is 0.30000000000000004, not a multiple of 0.1 to Ajv.
  if (schema.multipleOf !== undefined)
    value = Number((Math.ceil(value / step) * step).toFixed(decimals(step)));
  return value;
}

const decimals = (n: number): number => (String(n).split('.')[1] ?? '').length;

const fits = (s: string, schema: Schema, pattern: RegExp | null): boolean =>
  s.length >= (numberOf(schema.minLength) ?? 0) &&
  s.length <= (numberOf(schema.maxLength) ?? Infinity) &&
  (pattern === null || pattern.test(s));

export function sampleString(schema: Schema): string {
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : null;
  const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
  const min = numberOf(schema.minLength) ?? 0;
  const candidates = [
    ...(format ? [format] : []),
    // More repeats of the pattern's open quantifiers until the minimum length is reached.
    ...(pattern && typeof schema.pattern === 'string'
      ? Array.from({ length: Math.min(min, 64) + 1 }, (_, extra) =>
          fromPattern(String(schema.pattern), extra),
        )
      : []),
    'string'.padEnd(min, 'x').slice(0, numberOf(schema.maxLength) ?? Infinity),
    'example',
    'a',
    'A',
    '0',
  ];
  return candidates.find((s) => fits(s, schema, pattern)) ?? candidates[0] ?? '';
}

const CLASS_ESCAPES: Record<string, string> = { d: '0', D: 'a', w: 'a', W: '-', s: ' ', S: 'a' };

/**
 * A string a regular expression matches, for the subset patterns use here: literals, escapes,
 * classes, groups, alternation (the first), quantifiers (the minimum, plus `extra` where the
 * upper bound allows); lookarounds are skipped. Checked by the caller against the real RegExp.
 */
export function fromPattern(pattern: string, extra = 0): string {
  let i = 0;
  const alternatives = (): string => {
    const first = sequence();
    // The other alternatives are skipped: the first is enough.
    while (pattern[i] === '|') {
      i++;
      sequence();
    }
    return first;
  };
  const sequence = (): string => {
    let out = '';
    while (i < pattern.length && pattern[i] !== '|' && pattern[i] !== ')') {
      const atom = nextAtom();
      out += atom.repeat(quantifier());
    }
    return out;
  };
  const nextAtom = (): string => {
    const c = pattern[i++] ?? '';
    if (c === '^' || c === '$') return '';
    if (c === '.') return 'a';
    if (c === '\\') {
      const e = pattern[i++] ?? '';
      return e === 'b' || e === 'B' ? '' : (CLASS_ESCAPES[e] ?? e);
    }
    if (c === '[') return charClass();
    if (c !== '(') return c;
    const lookaround = /^\?<?[=!]/.test(pattern.slice(i, i + 3));
    const named = /^\?<[A-Za-z]/.test(pattern.slice(i, i + 3));
    if (pattern.startsWith('?:', i)) i += 2;
    else if (named) i = pattern.indexOf('>', i) + 1;
    else if (lookaround) i += pattern[i + 1] === '<' ? 3 : 2;
    const inner = alternatives();
    i++; // ')'
    return lookaround ? '' : inner;
  };
  const charClass = (): string => {
    const start = i;
    let end = i + (pattern[i] === '^' ? 1 : 0) + (pattern[i + (pattern[i] === '^' ? 1 : 0)] === ']' ? 1 : 0);
    while (end < pattern.length && pattern[end] !== ']') end += pattern[end] === '\\' ? 2 : 1;
    i = end + 1;
    const body = pattern.slice(start, end);
    const cls = new RegExp(`^[${body}]$`, 'u');
    // The first member (`[A-F0-9]` → A); a negated class, the first usual character it allows.
    const first = body.startsWith('^') ? [] : [firstMember(body)];
    return [...first, 'a', 'A', '0', '_', '-', ' ', '.', 'x'].find((ch) => cls.test(ch)) ?? '';
  };
  const quantifier = (): number => {
    const c = pattern[i];
    let count = 1;
    if (c === '*' || c === '+' || c === '?') {
      i++;
      count = c === '+' ? 1 + extra : c === '*' ? extra : Math.min(extra, 1);
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
      if (m) {
        i += m[0].length;
        const low = Number(m[1]);
        const high = m[2] === undefined ? low : m[3] ? Number(m[3]) : Infinity;
        count = Math.min(low + extra, high);
      }
    }
    if (pattern[i] === '?') i++; // lazy
    return count;
  };
  return alternatives();
}

/** The first character a class body names: `A-Z` → A, `\\d` → 0, `\\.` → `.`. */
function firstMember(body: string): string {
  const c = body[0] ?? '';
  return c === '\\' ? (CLASS_ESCAPES[body[1] ?? ''] ?? body[1] ?? '') : c;
}
