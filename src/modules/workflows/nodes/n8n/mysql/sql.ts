import { NodeOperationError } from '../../../engine/node-type.js';

/** A backquoted identifier; `db.table` as n8n's escapeSqlIdentifier splits it; `*` stays. */
export function ident(name: string): string {
  if (name === '*') return '*';
  if (name.length === 0 || name.length > 200 || name.includes('\0'))
    throw new NodeOperationError(`'${name.slice(0, 50)}' is not a valid column or table name`);
  return `\`${name.replace(/`/g, '``')}\``;
}

export const tableIdent = (name: string) =>
  name
    .split('.')
    .map((part) => ident(part.trim().replace(/^`|`$/g, '')))
    .join('.');

/**
 * n8n's MySQL query text: `$n` becomes a `?` parameter (values sent apart from the SQL), `$n:name`
 * a backquoted identifier; a `$n` inside quotes is left as text (n8n ≥ 2.5 does the same).
 */
export function toMySqlParameters(query: string, values: unknown[]): { text: string; values: unknown[] } {
  const out: unknown[] = [];
  let quote: string | null = null;
  let text = '';
  for (let i = 0; i < query.length; i++) {
    const ch = query[i] as string;
    if (quote) {
      text += ch;
      if (ch === quote) quote = null;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') {
      quote = ch;
      text += ch;
      continue;
    }
    const match = ch === '$' ? /^\$(\d+)(:name)?/.exec(query.slice(i)) : null;
    if (!match) {
      text += ch;
      continue;
    }
    const n = Number(match[1]);
    if (n < 1 || n > values.length)
      throw new NodeOperationError(`Query parameter $${n} has no value`, {
        description: `The query refers to $${n}; the Query Parameters option gives ${values.length} value(s)`,
      });
    if (match[2]) text += tableIdent(String(values[n - 1]));
    else {
      text += '?';
      out.push(values[n - 1]);
    }
    i += match[0].length - 1;
  }
  return { text, values: out };
}
