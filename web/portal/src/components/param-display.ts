/**
 * Which parameters a node's form shows: n8n's `displayOptions`, carried by the parameter schemas as an
 * annotation (src/modules/workflows/engine/display-options.ts). The rules are n8n's `displayParameter`:
 * every key of `show` must hold one of its values, any key of `hide` that holds one hides the parameter;
 * a key names a parameter beside this one (`sendBody`), one from the root (`/operation`), `@version`
 * or `@tool`; a referenced parameter that is not set counts with its schema's default, and one holding
 * an expression shows the parameter (its value is known only when the node runs). A list of options
 * (a name n8n describes more than once) shows the parameter when any of them does.
 */
import { type ParamSchema, unwrap } from './param-schema.js';

type Condition = unknown;
interface DisplayOptions {
  show?: Record<string, Condition[]>;
  hide?: Record<string, Condition[]>;
}

/** Where a parameter's conditions are read: the values beside it and the node's, with their schemas. */
export interface DisplayScope {
  level: unknown;
  levelSchema: ParamSchema;
  root: unknown;
  rootSchema: ParamSchema;
  version: number;
  /** The node is n8n's `…Tool` twin of a node (an AI agent's tool). */
  tool: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** A dotted path's value under `values`, a missing one taken from the schema's default. */
function lookup(values: unknown, schema: ParamSchema | undefined, path: string): unknown {
  let cur = values;
  let at = schema;
  for (const key of path.split('.')) {
    const child = at ? unwrap(at).properties?.[key] : undefined;
    let next = isObject(cur) ? cur[key] : undefined;
    if (next === undefined && child) next = unwrap(child).default;
    cur = next;
    at = child;
  }
  return cur;
}

function valuesOf(name: string, scope: DisplayScope): unknown[] {
  let value: unknown;
  if (name === '@version') value = scope.version;
  else if (name === '@tool') value = scope.tool;
  else if (name.startsWith('@')) return [];
  else if (name.startsWith('/')) value = lookup(scope.root, scope.rootSchema, name.slice(1));
  else value = lookup(scope.level, scope.levelSchema, name);
  // A resource locator (`{ __rl, mode, value }`) is compared by its value.
  if (isObject(value) && value.__rl) value = value.value;
  return Array.isArray(value) ? value : [value];
}

const same = (a: unknown, b: unknown) =>
  a === b || (typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b));

/** n8n's `checkConditions`: any condition holds; `{ _cnd: { op: target } }` holds for every value. */
function holds(conditions: Condition[], actual: unknown[]): boolean {
  return conditions.some((condition) => {
    const cnd = isObject(condition) ? condition._cnd : undefined;
    if (!isObject(cnd) || Object.keys(condition as object).length !== 1) return actual.includes(condition);
    const [op, target] = Object.entries(cnd)[0] ?? [];
    if (actual.length === 0) return op === 'not';
    return actual.every((v) => {
      const n = v as number;
      const t = target as number;
      switch (op) {
        case 'eq':
          return same(v, target);
        case 'not':
          return !same(v, target);
        case 'gte':
          return n >= t;
        case 'lte':
          return n <= t;
        case 'gt':
          return n > t;
        case 'lt':
          return n < t;
        case 'between': {
          const { from, to } = target as { from: number; to: number };
          return n >= from && n <= to;
        }
        case 'includes':
          return String(v).includes(String(target));
        case 'startsWith':
          return String(v).startsWith(String(target));
        case 'endsWith':
          return String(v).endsWith(String(target));
        case 'regex':
          try {
            return new RegExp(String(target)).test(String(v));
          } catch {
            return false;
          }
        case 'exists':
          return v !== null && v !== undefined && v !== '';
        default:
          return false;
      }
    });
  });
}

function shownBy(options: DisplayOptions, scope: DisplayScope): boolean {
  for (const [name, conditions] of Object.entries(options.show ?? {})) {
    const actual = valuesOf(name, scope);
    if (actual.some((v) => typeof v === 'string' && v.startsWith('='))) return true;
    if (!Array.isArray(conditions) || !holds(conditions, actual)) return false;
  }
  for (const [name, conditions] of Object.entries(options.hide ?? {})) {
    const actual = valuesOf(name, scope);
    if (actual.length > 0 && Array.isArray(conditions) && holds(conditions, actual)) return false;
  }
  return true;
}

/** The parameter's `displayOptions` (on the property, or on its non-null branch). */
function optionsOf(schema: ParamSchema): DisplayOptions | DisplayOptions[] | undefined {
  const own = (schema as { displayOptions?: unknown }).displayOptions;
  const found = own ?? (unwrap(schema) as { displayOptions?: unknown }).displayOptions;
  return isObject(found) || Array.isArray(found) ? (found as DisplayOptions | DisplayOptions[]) : undefined;
}

/** Whether the form shows a parameter with this schema, its conditions read in `scope`. */
export function isShown(schema: ParamSchema, scope: DisplayScope): boolean {
  const options = optionsOf(schema);
  if (!options) return true;
  const list = Array.isArray(options) ? options : [options];
  return list.length === 0 || list.some((o) => isObject(o) && shownBy(o, scope));
}

/**
 * The parameters without those the form hides, at every depth (n8n's editor leaves hidden parameters
 * out of what it saves). Conditions read the values as they were, before any is removed.
 */
export function withoutHidden(
  values: unknown,
  schema: ParamSchema,
  node: { version: number; tool: boolean },
): unknown {
  const prune = (level: unknown, levelSchema: ParamSchema): unknown => {
    const s = unwrap(levelSchema);
    if (Array.isArray(level)) return s.items ? level.map((entry) => prune(entry, s.items ?? {})) : level;
    if (!isObject(level) || !s.properties) return level;
    const scope: DisplayScope = { level, levelSchema: s, root: values, rootSchema: schema, ...node };
    const out: Record<string, unknown> = { ...level };
    for (const [name, child] of Object.entries(s.properties)) {
      if (!(name in out)) continue;
      if (isShown(child, scope)) out[name] = prune(out[name], child);
      else delete out[name];
    }
    return out;
  };
  return prune(values, schema);
}
