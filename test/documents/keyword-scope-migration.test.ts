import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/core/db/database.js';
import { migrateToLatest } from '../../src/core/db/migrate.js';
import type { Dialect } from '../../src/core/db/types.js';
import * as m603 from '../../src/modules/documents/migrations/603-keyword-scope.js';
import * as m604 from '../../src/modules/documents/migrations/604-drop-full-text.js';
import { documentsMigrations } from '../../src/modules/documents/migrations/index.js';
import { DocumentStore } from '../../src/modules/documents/store.js';
import type { ChunksTable, DocumentsTable } from '../../src/modules/documents/tables.js';
import { PG_URL, testDialects, uniqueName } from '../helpers/services.js';
import { ftsScopedMatch, tsScopedMatch } from './keyword-scope.js';

const BEFORE_603 = Object.fromEntries(
  Object.entries(documentsMigrations).filter(([name]) => name < '20261129_603'),
);
const UP_TO_603 = Object.fromEntries(
  Object.entries(documentsMigrations).filter(([name]) => name < '20261130_604'),
);

/** How many of the account's chunks (in these topics) hold the term, on 603's index (up to `cap`). */
async function termCount(
  db: DatabaseHandle['db'],
  dialect: Dialect,
  accountId: string,
  topics: string[] | null,
  term: string,
  cap: number,
): Promise<number> {
  const matches =
    dialect === 'sqlite'
      ? sql`select 1 from chunks_fts where chunks_fts match ${ftsScopedMatch(accountId, topics, [term], 'OR')} limit ${cap}`
      : sql`select 1 from chunks c where ${tsScopedMatch(accountId, topics, [term], '|')} limit ${cap}`;
  const row = await sql<{ n: number | string }>`select count(*) as n from (${matches}) m`.execute(db);
  return Number(row.rows[0]?.n ?? 0);
}

/** The account's chunks (in these topics) holding any of the terms, on 603's index. */
async function candidates(
  db: DatabaseHandle['db'],
  dialect: Dialect,
  accountId: string,
  topics: string[] | null,
  terms: string[],
): Promise<string[]> {
  const inTopics = topics ? sql`and c.topic in (${sql.join(topics)})` : sql``;
  const rows =
    dialect === 'sqlite'
      ? await sql<{
          id: string;
        }>`select c.id as id from chunks_fts join chunks c on c.rowid = chunks_fts.rowid
          where chunks_fts match ${ftsScopedMatch(accountId, topics, terms, 'OR')} and c.account_id = ${accountId} ${inTopics}`.execute(
          db,
        )
      : await sql<{ id: string }>`select c.id as id from chunks c
          where ${tsScopedMatch(accountId, topics, terms, '|')} and c.account_id = ${accountId} ${inTopics}`.execute(
          db,
        );
  return rows.rows.map((r) => r.id).sort();
}

/** Whether 603's index is there (the FTS5 table, or the tsvector column). */
async function hasFullText(db: DatabaseHandle['db'], dialect: Dialect): Promise<boolean> {
  const row =
    dialect === 'sqlite'
      ? await sql<{ n: number }>`select count(*) as n from sqlite_master where name = 'chunks_fts'`.execute(
          db,
        )
      : await sql<{
          n: string;
        }>`select count(*) as n from information_schema.columns where table_name = 'chunks' and column_name = 'tsv' and table_schema = current_schema()`.execute(
          db,
        );
  return Number(row.rows[0]?.n) > 0;
}

/** A document row as the migrations before 605 know it (no revision nor holds: cast to today's type). */
const document = (
  id: string,
  accountId: string,
  topic: string,
): Omit<DocumentsTable, 'revision' | 'holds' | 'held_at' | 'made_held'> => ({
  id,
  account_id: accountId,
  topic,
  source: 'text',
  url: null,
  title: id,
  mime_type: 'text/plain',
  content_hash: id,
  char_count: 10,
  page_count: 1,
  metadata: '{}',
  status: 'indexed',
  error: null,
  chunk_count: 2,
  embedding_model: null,
  language: 'none',
  processing: null,
  created_at: '2026-11-29T00:00:00.000Z',
  updated_at: '2026-11-29T00:00:00.000Z',
});

const chunk = (
  doc: Omit<DocumentsTable, 'revision' | 'holds' | 'held_at' | 'made_held'>,
  index: number,
  terms: string,
): ChunksTable => ({
  id: `${doc.id}-${index}`,
  document_id: doc.id,
  account_id: doc.account_id,
  topic: doc.topic,
  chunk_index: index,
  page_number: 1,
  start_offset: 0,
  end_offset: terms.length,
  text: terms,
  terms,
  embedding_model: null,
});

/** A topic name with quotes and a multi-byte letter: never query syntax on either database. */
const FAQ = `faq "é" 'x' \\ |`;
/** Two accounts; account A has two topics. Every chunk says "shared". */
const DOCS = [
  document('d-a-kb', 'acct-a', 'kb'),
  document('d-a-faq', 'acct-a', FAQ),
  document('d-b-kb', 'acct-b', 'kb'),
];
const TERMS = ['shared rare', 'shared other'];

describe.each(await testDialects())(
  'migration 603: the scope inside the keyword index, on %s',
  (dialect: Dialect) => {
    const handles: DatabaseHandle[] = [];
    const schema = uniqueName('kwscope');
    afterAll(async () => {
      const [first] = handles;
      if (first && dialect === 'postgres')
        await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(first.db);
      for (const h of handles) await h.close();
    });

    it('indexes existing chunks again, then follows inserts and deletes; down and up again keep search working', async () => {
      const handle = await openDatabase(
        dialect === 'postgres'
          ? { databaseUrl: PG_URL, dataDir: ':memory:', pgSchema: schema, pgPoolSize: 2 }
          : { databaseUrl: '', dataDir: ':memory:' },
      );
      handles.push(handle);
      const db = handle.db;
      await migrateToLatest(db, BEFORE_603);
      const store = new DocumentStore(db, dialect);
      // Rows written before the migration: it must index them with their scope.
      for (const doc of DOCS) {
        await store.insert(doc as DocumentsTable, [{ document_id: doc.id, page_number: 1, text: 'x' }]);
        await store.insertChunks(TERMS.length, (i) => chunk(doc, i, TERMS[i]!));
      }
      expect((await migrateToLatest(db, UP_TO_603)).map((r) => r.migrationName)).toEqual([
        '20261129_603_keyword_scope',
      ]);

      const count = (account: string, topics: string[] | null, term = 'shared') =>
        termCount(db, dialect, account, topics, term, 100);
      const ids = (account: string, topics: string[] | null, terms: string[]) =>
        candidates(db, dialect, account, topics, terms);
      const check = async () => {
        expect(await count('acct-a', null)).toBe(4);
        expect(await count('acct-a', ['kb'])).toBe(2);
        expect(await count('acct-a', [FAQ])).toBe(2);
        expect(await count('acct-a', ['kb', FAQ])).toBe(4);
        expect(await count('acct-b', null)).toBe(2);
        expect(await count('acct-b', [FAQ])).toBe(0);
        expect(await count('acct-c', null)).toBe(0);
        expect(await ids('acct-b', null, ['rare'])).toEqual(['d-b-kb-0']);
        expect(await ids('acct-a', [FAQ], ['rare', 'other'])).toEqual(['d-a-faq-0', 'd-a-faq-1']);
      };
      await check();

      // A scope token written as a word of a chunk is a word, not a scope (PostgreSQL's lexeme also
      // starts with '@', which no stored word holds).
      const token = `a${
        dialect === 'sqlite'
          ? Buffer.from('acct-a').toString('hex')
          : createHash('md5').update('acct-a').digest('hex')
      }`;
      const intruder = document('d-b-intruder', 'acct-b', 'kb');
      await store.insert(intruder as DocumentsTable, [
        { document_id: intruder.id, page_number: 1, text: 'x' },
      ]);
      await store.insertChunks(1, () => chunk(intruder, 0, `shared ${token}`));
      expect(await count('acct-a', null)).toBe(4);
      expect(await count('acct-b', null)).toBe(3);
      expect(await count('acct-a', null, token)).toBe(0);

      // Chunks written and deleted after it: the triggers (SQLite) and the generated column (PostgreSQL).
      await store.clearChunks(intruder.id);
      expect(await count('acct-b', null)).toBe(2);
      const late = document('d-a-late', 'acct-a', 'kb');
      await store.insert(late as DocumentsTable, [{ document_id: late.id, page_number: 1, text: 'x' }]);
      await store.insertChunks(1, () => chunk(late, 0, 'shared rare'));
      expect(await count('acct-a', ['kb'])).toBe(3);
      await store.clearChunks(late.id);
      await check();

      // Down rebuilds 601's index from the rows; up again indexes them with their scope.
      await m603.down(db as never);
      const old =
        dialect === 'sqlite'
          ? await sql<{
              n: number;
            }>`select count(*) as n from chunks_fts where chunks_fts match 'shared'`.execute(db)
          : await sql<{
              n: string;
            }>`select count(*) as n from chunks where tsv @@ to_tsquery('simple', 'shared')`.execute(db);
      expect(Number(old.rows[0]?.n)).toBe(6);
      await m603.up(db as never);
      await check();

      // 604 drops the index (nothing reads it: keyword search ranks in process); chunks are still
      // written and deleted without it; its down builds 603's again from the rows.
      expect((await migrateToLatest(db, documentsMigrations)).map((r) => r.migrationName)).toEqual([
        '20261130_604_drop_full_text',
        '20261130_605_document_revision',
        '20261201_606_document_holds',
        '20261202_607_document_held_at',
        '20261202_608_chunk_vector_owner',
        '20261202_609_document_deleting_index',
      ]);
      expect(await hasFullText(db, dialect)).toBe(false);
      const after = document('d-a-after', 'acct-a', 'kb');
      await store.insert(after as DocumentsTable, [{ document_id: after.id, page_number: 1, text: 'x' }]);
      await store.insertChunks(1, () => chunk(after, 0, 'shared rare'));
      await store.clearChunks(after.id);
      await m604.down(db as never);
      expect(await hasFullText(db, dialect)).toBe(true);
      await check();
    });
  },
);
