import { type TSchema, Type } from 'typebox';

/**
 * Copies of a node schema made once, for the TypeBox value functions that walk a schema on every call
 * (`Value.Default`, `Value.Convert`): each gives the results it gives with the schema as written
 * (parameters.test.ts compares them), at a fraction of the cost per item.
 */

const valueSchemas = new WeakMap<TSchema, TSchema>();

/**
 * The schema as `Value.Default` and `Value.Convert` walk it. TypeBox keeps an `Enum` deferred and
 * evaluates it to its union of literals on every visit (and checks unions without a compiled
 * checker), which made resolving a Postgres node's parameters cost milliseconds per item; here each
 * `Enum` is that union once, its annotations (`default`) kept, so both functions give what they gave.
 * Checks and their messages still use the schema as written.
 */
export function valueSchemaOf(schema: TSchema): TSchema {
  let found = valueSchemas.get(schema);
  if (!found) {
    found = evaluatedEnums(schema, new Map()) as TSchema;
    valueSchemas.set(schema, found);
  }
  return found;
}

function evaluatedEnums(node: unknown, seen: Map<object, unknown>): unknown {
  if (node === null || typeof node !== 'object') return node;
  const done = seen.get(node);
  if (done !== undefined) return done;
  if (Array.isArray(node)) {
    const list: unknown[] = [];
    seen.set(node, list);
    for (const value of node) list.push(evaluatedEnums(value, seen));
    return list;
  }
  if (Type.IsEnum(node)) {
    // Own enumerable keys only: `~kind` is not one, so the union is a union, not an enum.
    const { enum: _values, ...annotations } = node as TSchema & { enum: unknown };
    const union = Type.Evaluate(node, annotations);
    seen.set(node, union);
    return union;
  }
  const copy: Record<PropertyKey, unknown> = {};
  seen.set(node, copy);
  for (const key of Reflect.ownKeys(node)) {
    const field = Object.getOwnPropertyDescriptor(node, key) as PropertyDescriptor;
    Object.defineProperty(
      copy,
      key,
      'value' in field ? { ...field, value: evaluatedEnums(field.value, seen) } : field,
    );
  }
  return copy;
}

const defaultsSchemas = new WeakMap<TSchema, TSchema>();

/** Stands for a part of a schema that holds no default: `Value.Default` leaves its value as it is. */
const NO_DEFAULTS = Type.Unknown();

/**
 * The schema as `Value.Default` needs it: `valueSchemaOf`'s, with every property, item or additional
 * property schema that holds no `default` (nor a reference, which could reach one) replaced by one
 * Default passes over. A union is kept whole when it holds a default: which variant gets defaults
 * depends on checking the variants as written.
 */
export function defaultsSchemaOf(schema: TSchema): TSchema {
  let found = defaultsSchemas.get(schema);
  if (!found) {
    found = defaultsOnly(valueSchemaOf(schema)) as TSchema;
    defaultsSchemas.set(schema, found);
  }
  return found;
}

/** Keys under which a schema holds a map of schemas, and keys holding one schema (or a list of them). */
const SCHEMA_MAPS = ['properties', 'patternProperties'] as const;
const SCHEMA_SLOTS = ['items', 'prefixItems', 'additionalProperties'] as const;

function defaultsOnly(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  if (!mayDefault(schema, new Set())) return NO_DEFAULTS;
  const copy = copyOf(schema);
  for (const key of SCHEMA_MAPS) {
    const map = copy[key];
    if (map === null || typeof map !== 'object') continue;
    const pruned: Record<string, unknown> = {};
    for (const [name, inner] of Object.entries(map)) pruned[name] = defaultsOnly(inner);
    copy[key] = pruned;
  }
  for (const key of SCHEMA_SLOTS) {
    const slot = copy[key];
    if (Array.isArray(slot)) copy[key] = slot.map(defaultsOnly);
    else if (slot !== null && typeof slot === 'object') copy[key] = defaultsOnly(slot);
  }
  return copy;
}

/** Whether a default could be reached inside: a `default`, or a reference (`$ref`, `$defs`, cyclic). */
function mayDefault(node: unknown, seen: Set<object>): boolean {
  if (node === null || typeof node !== 'object' || seen.has(node)) return false;
  seen.add(node);
  if (Array.isArray(node)) return node.some((value) => mayDefault(value, seen));
  const record = node as Record<string, unknown>;
  if ('default' in record || '$ref' in record || '$defs' in record) return true;
  if (record['~kind'] === 'Cyclic' || record['~kind'] === 'Ref') return true;
  return Object.values(record).some((value) => mayDefault(value, seen));
}

/** A shallow copy keeping every own key (TypeBox's markers are symbols or not enumerable). */
function copyOf(node: object): Record<PropertyKey, unknown> {
  const copy: Record<PropertyKey, unknown> = {};
  for (const key of Reflect.ownKeys(node))
    Object.defineProperty(copy, key, Object.getOwnPropertyDescriptor(node, key) as PropertyDescriptor);
  return copy;
}
