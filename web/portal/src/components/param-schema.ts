/**
 * Reading a node type's parameter schema (the JSON schema `GET /api/v1/node-types/schema` answers)
 * for a generated form: which widget a schema gets, labels, defaults, and paths into the parameters.
 */

export interface ParamSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: ParamSchema[];
  properties?: Record<string, ParamSchema>;
  patternProperties?: Record<string, ParamSchema>;
  additionalProperties?: boolean | ParamSchema;
  required?: string[];
  items?: ParamSchema;
  default?: unknown;
  description?: string;
  title?: string;
  /** n8n's `displayOptions` (param-display.ts). */
  displayOptions?: unknown;
  /** A value a form generates for a new entry: `uuid` (n8n's assignment and condition ids). */
  generated?: string;
}

/** What a schema is edited with. `json`: shapes a form cannot say (any value, unions, maps). */
export type Kind = 'string' | 'number' | 'boolean' | 'enum' | 'object' | 'array' | 'json' | 'const' | 'none';

const isNull = (s: ParamSchema) => s.type === 'null';

/** A nullable union (`X | null`) read as its one other branch. */
export function unwrap(schema: ParamSchema): ParamSchema {
  const branches = schema.anyOf;
  if (!branches) return schema;
  const others = branches.filter((b) => !isNull(b));
  const only = others[0];
  if (others.length === 1 && only) return { ...only, default: schema.default ?? only.default };
  return schema;
}

/** The values a select offers: `enum`, or a union of constants. */
export function choicesOf(schema: ParamSchema): unknown[] | null {
  if (Array.isArray(schema.enum)) return schema.enum;
  const branches = schema.anyOf?.filter((b) => !isNull(b));
  if (branches && branches.length > 0 && branches.every((b) => 'const' in b))
    return branches.map((b) => b.const);
  return null;
}

export function kindOf(raw: ParamSchema): Kind {
  const schema = unwrap(raw);
  if ('const' in schema) return 'const';
  if (choicesOf(schema)) return 'enum';
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'object': {
      const keys = Object.keys(schema.properties ?? {});
      if (schema.patternProperties || (schema.additionalProperties !== false && keys.length === 0))
        return 'json';
      return keys.length === 0 ? 'none' : 'object';
    }
    case 'array': {
      if (!schema.items) return 'json';
      const item = kindOf(schema.items);
      return item === 'json' || item === 'none' || item === 'array' ? 'json' : 'array';
    }
    default:
      return 'json';
  }
}

/** `duplicateCount` → "Duplicate count". */
export function labelOf(name: string, schema: ParamSchema): string {
  if (schema.title) return schema.title;
  const words = name
    .replace(/^_+/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase();
  const named = words.replace(/\b(json|url|id|html|http|api|sql|xml|csv)\b/g, (w) => w.toUpperCase());
  return named.charAt(0).toUpperCase() + named.slice(1);
}

/** n8n's expression: a string starting with `=` (usually `={{ … }}`), evaluated per item. */
export const isExpression = (value: unknown): value is string =>
  typeof value === 'string' && value.startsWith('=');

export type Path = Array<string | number>;

/** `['a', 0, 'b']` → `a[0].b`, as the API names a parameter in its problems. */
export function pathText(path: Path): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

export function getAt(root: unknown, path: Path): unknown {
  let cur = root;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return cur;
}

/** A copy of `root` with `value` at `path` (undefined removes the key), creating objects and arrays on the way. */
export function setAt(root: unknown, path: Path, value: unknown): unknown {
  const [key, ...rest] = path;
  if (key === undefined) return value;
  const base: Record<string | number, unknown> | unknown[] = Array.isArray(root)
    ? [...root]
    : root && typeof root === 'object'
      ? { ...(root as Record<string, unknown>) }
      : typeof key === 'number'
        ? []
        : {};
  const next = setAt((base as Record<string | number, unknown>)[key], rest, value);
  if (next === undefined && !Array.isArray(base)) delete (base as Record<string | number, unknown>)[key];
  else (base as Record<string | number, unknown>)[key] = next;
  return base;
}

/** A new entry of a repeatable group: its required fields with their defaults, constants set. */
export function newEntry(schema: ParamSchema): unknown {
  const s = unwrap(schema);
  if ('const' in s) return s.const;
  if (s.default !== undefined) return structuredClone(s.default);
  if (kindOf(s) !== 'object') {
    const kind = kindOf(s);
    if (kind === 'enum') return choicesOf(s)?.[0];
    return kind === 'boolean' ? false : kind === 'number' ? 0 : '';
  }
  const entry: Record<string, unknown> = {};
  for (const [name, child] of Object.entries(s.properties ?? {})) {
    const c = unwrap(child);
    if ('const' in c) entry[name] = c.const;
    else if (c.generated === 'uuid') entry[name] = freshUuid();
    else if (s.required?.includes(name)) entry[name] = newEntry(c);
  }
  return entry;
}

/** A random (v4) UUID; `crypto.randomUUID` needs a secure context, `getRandomValues` does not. */
export function freshUuid(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A number field's text: a number when it reads as one, else the text (an expression, or for the API to refuse). */
export function numberFrom(text: string): number | string | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  return /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t) ? Number(t) : text;
}
