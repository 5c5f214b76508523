import { NodeOperationError } from '../../../engine/node-type.js';
import { ident } from '../postgres/sql.js';

/** PostgreSQL's longest identifier (NAMEDATALEN - 1). */
const MAX_NAME = 63;
const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const QUOTABLE = /^[\p{L}\p{N}_ ]+$/u;

/**
 * A name as n8n's unquoted `$1:raw` would read it, without splicing text into SQL: a plain identifier
 * folds to lower case (as PostgreSQL folds it), anything else is quoted; hyphens refused as n8n does.
 */
export function foldedName(raw: string, what: string): string {
  const name = raw.trim();
  if (name === '' || name.length > MAX_NAME || name.includes('\0'))
    throw new NodeOperationError(`The ${what} '${name.slice(0, 80)}' is not a valid PostgreSQL name`);
  if (name.includes('-')) throw new NodeOperationError(`The ${what} cannot contain hyphens (-)`);
  if (PLAIN.test(name)) return name.toLowerCase();
  // Quoted as it is, but never with quotes, dollars or control characters (it also lands in a literal).
  if (!QUOTABLE.test(name))
    throw new NodeOperationError(
      `The ${what} '${name.slice(0, 80)}' may hold letters, digits, _ and spaces only`,
    );
  return name;
}

/** `schema.name` or `name`, each part folded and quoted, for DDL. */
export function qualified(raw: string, what: string): string {
  return raw
    .split('.')
    .map((part) => ident(foldedName(part, what)))
    .join('.');
}

/** What n8n names things after the node: its id with hyphens as underscores. */
export const nodeSuffix = (nodeId: string) => nodeId.replace(/-/g, '_').replace(/[^A-Za-z0-9_]/g, '_');
