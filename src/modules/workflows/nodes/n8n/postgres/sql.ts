import { NodeOperationError } from '../../../engine/node-type.js';

/** A quoted identifier (`"a""b"`); `*` stays a star, as pg-promise's `:name` does. */
export function ident(name: string): string {
  if (name === '*') return '*';
  if (name.length === 0 || name.length > 200 || name.includes('\0'))
    throw new NodeOperationError(`'${name.slice(0, 50)}' is not a valid column or table name`);
  return `"${name.replace(/"/g, '""')}"`;
}

const PLACEHOLDER = /\$(\d+)(:name|:alias|:raw|:value|:json|:csv|:list|~|\^|#)?/g;

/**
 * n8n's query text (pg-promise's `$1` formatting) as a parameterised query: `$n` and `$n:json` are
 * sent as server-side parameters, `$n:csv` as one per element, `$n:name` becomes a quoted identifier;
 * `$n:raw` (text spliced into the SQL unescaped) is refused. Renumbers what remains from $1.
 */
export function toServerParameters(query: string, values: unknown[]): { text: string; values: unknown[] } {
  const out: unknown[] = [];
  const plainIndex = new Map<number, number>();
  const add = (value: unknown) => {
    out.push(value);
    return `$${out.length}`;
  };
  const text = query.replace(PLACEHOLDER, (whole, digits: string, modifier: string | undefined) => {
    const n = Number(digits);
    if (n < 1 || n > values.length)
      throw new NodeOperationError(`Query parameter ${whole} has no value`, {
        description: `The query refers to $${n}; the Query Parameters option gives ${values.length} value(s)`,
      });
    const value = values[n - 1];
    switch (modifier) {
      case undefined: {
        const known = plainIndex.get(n);
        if (known !== undefined) return `$${known}`;
        const placeholder = add(value);
        plainIndex.set(n, out.length);
        return placeholder;
      }
      case ':json':
        return add(JSON.stringify(value));
      case ':csv':
      case ':list':
        return (Array.isArray(value) ? value : [value]).map(add).join(', ');
      case ':name':
      case ':alias':
      case '~':
        return (Array.isArray(value) ? value : [value]).map((v) => ident(String(v))).join(', ');
      default:
        throw new NodeOperationError(`Query parameter ${whole} is refused`, {
          description: `${whole} would splice its value into the SQL unescaped; use $${n} (a parameter) or $${n}:name (an identifier)`,
        });
    }
  });
  return { text, values: out.map(serverValue) };
}

/** What pg sends for a value: objects as JSON, the rest as pg converts them. */
function serverValue(value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date))
    return JSON.stringify(value);
  return value;
}
