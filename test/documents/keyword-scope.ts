/**
 * Migration 603's full-text queries, for its test (604 dropped the index; keyword search ranks in
 * process). Restricted to an account (and topics) inside the index: each chunk's entry
 * holds scope tokens (migrations/603-keyword-scope.ts makes them), and a query asks for the terms AND
 * its scope, so the index intersects both instead of every match in the database being read and filtered.
 */
import { type RawBuilder, sql } from 'kysely';

/** SQLite's `hex()` of a text (its UTF-8 bytes), as the FTS5 tokenizer sees it (lower case). */
const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');

/** An FTS5 string of the terms, each quoted: user text is never FTS5 syntax. */
export function ftsTerms(terms: string[], op: 'OR' | 'AND'): string {
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(` ${op} `);
}

/** The FTS5 scope tokens of an account's chunks, or of its chunks in these topics. */
export function ftsScopeTokens(accountId: string, topics: string[] | null): string[] {
  if (!topics) return [`a${hex(accountId)}`];
  return topics.map((topic) => `t${hex(accountId)}x${hex(topic)}`);
}

/** An FTS5 MATCH: the terms (in the `terms` column) and the scope (in `scope`). */
export function ftsScopedMatch(
  accountId: string,
  topics: string[] | null,
  terms: string[],
  op: 'OR' | 'AND',
): string {
  return `scope : (${ftsTerms(ftsScopeTokens(accountId, topics), 'OR')}) AND terms : (${ftsTerms(terms, op)})`;
}

/**
 * A tsquery of the terms, each quoted as a lexeme (`'word'`): the terms are words of letters and
 * digits, and quoting keeps any of them from reading as an operator.
 */
export function tsTerms(terms: string[], op: '|' | '&'): string {
  return terms.map((t) => `'${t.replaceAll("'", "''").replaceAll('\\', '\\\\')}'`).join(` ${op} `);
}

/**
 * The tsquery of a scope, made by PostgreSQL's own md5 (as the generated column is, whatever the
 * database's encoding): `'@a…'`, or `'@t…' | '@t…'` for topics.
 */
function tsScope(accountId: string, topics: string[] | null): RawBuilder<unknown> {
  if (!topics) return sql`quote_literal('@a' || md5(${accountId}))::tsquery`;
  const each = topics.map((topic) => sql`quote_literal('@t' || md5(${accountId}) || md5(${topic}))`);
  return sql`(${sql.join(each, sql` || ' | ' || `)})::tsquery`;
}

/** A PostgreSQL condition on `c.tsv`: the terms and the scope. */
export function tsScopedMatch(
  accountId: string,
  topics: string[] | null,
  terms: string[],
  op: '|' | '&',
): RawBuilder<unknown> {
  return sql`c.tsv @@ (to_tsquery('simple', ${tsTerms(terms, op)}) && ${tsScope(accountId, topics)})`;
}
