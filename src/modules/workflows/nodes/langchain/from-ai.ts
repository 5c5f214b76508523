/**
 * n8n's `$fromAI(key, description, type, default)` in a tool's parameters: the keys become the tool's
 * argument schema, and when the model calls the tool its arguments are checked against it before the
 * parameters are resolved (`$fromAI` then reads them; the values are data, never code).
 */

export type FromAiType = 'string' | 'number' | 'boolean' | 'json';

export interface FromAiParameter {
  key: string;
  description: string;
  type: FromAiType;
  /** Has a default: the model may leave it out. */
  optional: boolean;
}

const KEY = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_PARAMETERS = 64;
/** One `$fromAI(` call's quoted arguments (up to four); a default that is not quoted still counts. */
const CALL =
  /\$fromAI\(\s*(['"`])((?:\\.|(?!\1).){0,200})\1\s*(?:,\s*(['"`])((?:\\.|(?!\3).){0,2000})\3\s*)?(?:,\s*(['"`])((?:\\.|(?!\5).){0,20})\5\s*)?(,)?/g;

/** The `$fromAI` parameters used anywhere in `parameters` (strings of any depth), first use wins. */
export function fromAiParameters(parameters: unknown): FromAiParameter[] {
  const found = new Map<string, FromAiParameter>();
  const visit = (value: unknown, depth: number): void => {
    if (depth > 20 || found.size >= MAX_PARAMETERS) return;
    if (typeof value === 'string') {
      if (!value.includes('$fromAI')) return;
      for (const m of value.matchAll(CALL)) {
        const key = m[2] ?? '';
        if (!KEY.test(key))
          throw new Error(`$fromAI key '${key.slice(0, 64)}' must be 1–64 letters, digits, '_' or '-'`);
        if (found.has(key)) continue;
        const type = (m[6] || 'string') as FromAiType;
        if (!['string', 'number', 'boolean', 'json'].includes(type))
          throw new Error(`$fromAI('${key}') has type '${type}': use string, number, boolean or json`);
        found.set(key, { key, description: m[4] ?? '', type, optional: m[7] === ',' });
      }
      return;
    }
    if (Array.isArray(value)) for (const v of value) visit(v, depth + 1);
    else if (value && typeof value === 'object') for (const v of Object.values(value)) visit(v, depth + 1);
  };
  visit(parameters, 0);
  return [...found.values()];
}

/** The JSON schema of a tool's arguments from its `$fromAI` parameters. */
export function fromAiSchema(list: FromAiParameter[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const p of list) {
    const type = p.type === 'json' ? {} : { type: p.type };
    properties[p.key] = { ...type, ...(p.description ? { description: p.description } : {}) };
  }
  return {
    type: 'object',
    properties,
    required: list.filter((p) => !p.optional).map((p) => p.key),
  };
}

/** The model's arguments checked against the parameters; throws what is wrong (the model reads it). */
export function checkFromAiArguments(
  list: FromAiParameter[],
  args: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of list) {
    const value = args[p.key];
    if (value === undefined || value === null) {
      if (!p.optional) throw new Error(`the argument '${p.key}' is missing`);
      continue;
    }
    if (p.type === 'number') {
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isFinite(n))
        throw new Error(`the argument '${p.key}' must be a number`);
      out[p.key] = n;
    } else if (p.type === 'boolean') {
      if (typeof value === 'boolean') out[p.key] = value;
      else if (value === 'true' || value === 'false') out[p.key] = value === 'true';
      else throw new Error(`the argument '${p.key}' must be true or false`);
    } else if (p.type === 'string') {
      if (typeof value === 'object') throw new Error(`the argument '${p.key}' must be text`);
      out[p.key] = String(value);
    } else out[p.key] = value;
  }
  return out;
}

/** n8n's tool name for a node: its name with every character but letters, digits, `_` and `-` as `_`. */
export function toolNameOf(nodeName: string): string {
  return nodeName.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'tool';
}
