import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { PG_URL, testDialects, uniqueName } from '../helpers/services.js';
import { runNode } from './db-support.js';
import { createCredential, workflowPlatform } from './support.js';

// The node's own server: the test PostgreSQL (127.0.0.1 allowed by OUTBOUND_ALLOW_HOSTS in the
// test platform), a schema of its own per run.
const schema = uniqueName('n8n_pg');
const admin = new pg.Client({ connectionString: PG_URL });

beforeAll(async () => {
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
});
afterAll(async () => {
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
});

describe.each(await testDialects())("n8n's Postgres node against PostgreSQL, platform on %s", (dialect) => {
  let p: TestPlatform;
  let cred = '';
  const table = uniqueName(`people_${dialect}`);
  const qualified = () => `${schema}.${table}`;
  const rlc = (value: string) => ({ __rl: true, mode: 'list', value });
  const node = (parameters: Record<string, unknown>, typeVersion = 2.5) => ({
    type: 'postgres',
    typeVersion,
    parameters: { schema: rlc(schema), table: rlc(table), options: {}, ...parameters },
    credentials: { postgres: { id: cred, name: 'pg' } },
  });

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    // n8n's API sends the port as a number and ssl as an option: both accepted.
    const res = await p.request({
      method: 'POST',
      url: '/api/v1/credentials',
      payload: {
        name: 'pg',
        type: 'postgres',
        data: {
          host: '127.0.0.1',
          port: 5432,
          database: 'test',
          user: 'postgres',
          password: '',
          ssl: 'disable',
        },
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    cred = res.json().id;
    await admin.query(
      `CREATE TABLE ${qualified()} (id integer PRIMARY KEY, name text NOT NULL, score numeric, tags jsonb)`,
    );
  });
  afterAll(() => p.close());

  it('inserts items (auto-mapped, v2.5 and v2.0 shapes), skips conflicts, answers the rows', async () => {
    const inserted = await runNode(
      p,
      node({ operation: 'insert', columns: { mappingMode: 'autoMapInputData', value: null } }),
      [
        { id: 1, name: 'Ada', score: 9.5, tags: { lang: 'en' } },
        { id: 2, name: 'Grace', score: 8 },
      ],
    );
    expect(inserted.error).toBeUndefined();
    expect(inserted.out).toEqual([
      { id: 1, name: 'Ada', score: '9.5', tags: { lang: 'en' } },
      { id: 2, name: 'Grace', score: '8', tags: null },
    ]);
    const legacy = await runNode(
      p,
      node(
        {
          operation: 'insert',
          dataMode: 'defineBelow',
          valuesToSend: {
            values: [
              { column: 'id', value: 3 },
              { column: 'name', value: '={{ $json.who }}' },
            ],
          },
          options: { skipOnConflict: true },
        },
        2,
      ),
      [{ who: 'Linus' }],
    );
    expect(legacy.out).toEqual([{ id: 3, name: 'Linus', score: null, tags: null }]);
    const again = await runNode(
      p,
      node({
        operation: 'insert',
        columns: { mappingMode: 'autoMapInputData' },
        options: { skipOnConflict: true },
      }),
      [{ id: 1, name: 'dup' }],
    );
    expect(again.out).toEqual([{ success: true }]);
    const unknown = await runNode(
      p,
      node({ operation: 'insert', columns: { mappingMode: 'autoMapInputData' } }),
      [{ id: 9, nope: 1 }],
    );
    expect(unknown.error).toBe("Column 'nope' does not exist in selected table");
  });

  it('knows columns added since the last run at once; a column dropped since is still a clear error', async () => {
    const changing = uniqueName('changing');
    await admin.query(`CREATE TABLE ${schema}.${changing} (id integer PRIMARY KEY, name text)`);
    const into = (parameters: Record<string, unknown>) => ({
      ...node(parameters),
      parameters: { ...node(parameters).parameters, table: rlc(changing) },
    });
    const run = (row: Record<string, unknown>) =>
      runNode(p, into({ operation: 'insert', columns: { mappingMode: 'autoMapInputData' } }), [row]);
    expect((await run({ id: 1, name: 'a' })).error).toBeUndefined();
    // Columns read by the run before are kept a while; a new one is looked up again, not refused.
    await admin.query(`ALTER TABLE ${schema}.${changing} ADD COLUMN nick text`);
    const added = await run({ id: 2, name: 'b', nick: 'bee' });
    expect(added.error).toBeUndefined();
    expect(added.out).toEqual([{ id: 2, name: 'b', nick: 'bee' }]);
    expect((await run({ id: 3, nope: 1 })).error).toBe("Column 'nope' does not exist in selected table");
    // Dropped since the columns were read: the server refuses the statement, naming the column.
    await admin.query(`ALTER TABLE ${schema}.${changing} DROP COLUMN nick`);
    const dropped = await run({ id: 4, name: 'd', nick: 'dee' });
    expect(dropped.error).toContain('nick');
    expect((await run({ id: 5, name: 'e' })).out).toEqual([{ id: 5, name: 'e' }]);
  });

  it('executes a query with $1 parameters: $json cannot inject SQL', async () => {
    const evil = `x'); DROP TABLE ${qualified()}; --`;
    const res = await runNode(
      p,
      node({
        operation: 'executeQuery',
        query: `SELECT $1::text AS said, $2::int AS n, name FROM ${qualified()} WHERE id = $2`,
        options: { queryReplacement: '={{ $json.text }}, {{ $json.id }}' },
      }),
      [
        { text: evil, id: 1 },
        { text: 'a, b', id: 2 },
      ],
    );
    expect(res.error).toBeUndefined();
    expect(res.out).toEqual([
      { said: evil, n: 1, name: 'Ada' },
      { said: 'a, b', n: 2, name: 'Grace' },
    ]);
    // An array answer is the values; :name quotes an identifier; the table is intact.
    const arr = await runNode(
      p,
      node({
        operation: 'executeQuery',
        query: `SELECT count(*)::int AS c FROM ${schema}.$1:name WHERE id > $2`,
        options: { queryReplacement: `={{ ["${table}", 1] }}` },
      }),
    );
    expect(arr.out).toEqual([{ c: 2 }]);
    const raw = await runNode(
      p,
      node({ operation: 'executeQuery', query: 'SELECT $1:raw', options: { queryReplacement: '1' } }),
    );
    expect(raw.error).toBe('Query parameter $1:raw is refused');
    const missing = await runNode(p, node({ operation: 'executeQuery', query: 'SELECT $2', options: {} }));
    expect(missing.error).toBe('Query parameter $2 has no value');
    const write = await runNode(
      p,
      node({ operation: 'executeQuery', query: `UPDATE ${qualified()} SET score = 1 WHERE id = -1` }),
    );
    expect(write.out).toEqual([{ success: true }]);
  });

  it('updates by matching columns, and says when no row matches', async () => {
    const res = await runNode(
      p,
      node({
        operation: 'update',
        columns: {
          mappingMode: 'defineBelow',
          value: { id: '={{ $json.id }}', score: 7 },
          matchingColumns: ['id'],
        },
      }),
      [{ id: 2 }],
    );
    expect(res.out).toEqual([{ id: 2, name: 'Grace', score: '7', tags: null }]);
    const none = await runNode(
      p,
      node({ operation: 'update', columns: { mappingMode: 'autoMapInputData', matchingColumns: ['id'] } }),
      [{ id: 99, name: 'nobody' }],
    );
    expect(none.error).toBe("The row you are trying to update doesn't exist");
  });

  it('upserts: inserts a new row, updates an existing one', async () => {
    const res = await runNode(
      p,
      node({
        operation: 'upsert',
        columns: { mappingMode: 'autoMapInputData', matchingColumns: ['id'] },
        options: { outputColumns: ['id', 'name'] },
      }),
      [
        { id: 1, name: 'Ada Lovelace' },
        { id: 4, name: 'Barbara' },
      ],
    );
    expect(res.out).toEqual([
      { id: 1, name: 'Ada Lovelace' },
      { id: 4, name: 'Barbara' },
    ]);
  });

  it('selects with conditions, sort and limit (large numbers as numbers on request)', async () => {
    const res = await runNode(
      p,
      node({
        operation: 'select',
        where: { values: [{ column: 'id', condition: '>', value: 1 }] },
        sort: { values: [{ column: 'id', direction: 'DESC' }] },
        limit: 2,
        options: { outputColumns: ['id', 'score'], largeNumbersOutput: 'numbers' },
      }),
    );
    expect(res.out).toEqual([
      { id: 4, score: null },
      { id: 3, score: null },
    ]);
    const like = await runNode(
      p,
      node({
        operation: 'select',
        returnAll: true,
        where: { values: [{ column: 'name', condition: 'LIKE', value: 'Ada%' }] },
      }),
    );
    expect(like.out.map((r) => r.id)).toEqual([1]);
  });

  it('bounds a long query by its timeout and a huge result by maxRows, with clear errors', async () => {
    const t0 = Date.now();
    const slow = await runNode(
      p,
      node({ operation: 'executeQuery', query: 'SELECT pg_sleep(60)', options: { queryTimeout: 1 } }),
    );
    expect(slow.error).toContain('ran past its time limit');
    const huge = await runNode(
      p,
      node({ operation: 'executeQuery', query: 'SELECT g FROM generate_series(1, 1000000) g' }),
    );
    expect(huge.error).toBe('The query returned more than 10000 rows');
    expect(Date.now() - t0).toBeLessThan(15_000);
    // The workflow's executionTimeout bounds it too.
    const bounded = await runNode(
      p,
      node({ operation: 'executeQuery', query: 'SELECT pg_sleep(60)' }),
      [{}],
      { executionTimeout: 1 },
    );
    expect(bounded.execution.status).not.toBe('success');
    // The pool still answers afterwards.
    const ok = await runNode(p, node({ operation: 'executeQuery', query: 'SELECT 1 AS one' }));
    expect(ok.out).toEqual([{ one: 1 }]);
  });

  it("runs n8n's v1 shapes: insert with casts, update by key, query parameters from item properties", async () => {
    const t1 = `${schema}.${table}_v1`;
    await admin.query(`CREATE TABLE ${t1} (id integer PRIMARY KEY, name text, born date, big bigint)`);
    const v1 = (parameters: Record<string, unknown>) => ({
      type: 'postgres',
      typeVersion: 1,
      parameters: { schema, table: `${table}_v1`, additionalFields: {}, ...parameters },
      credentials: { postgres: { id: cred, name: 'pg' } },
    });
    // Multiple (the default): one INSERT of all items, casts applied, RETURNING the fields asked.
    const ins = await runNode(
      p,
      v1({ operation: 'insert', columns: 'id:int,name:text,born:date', returnFields: 'id, name' }),
      [
        { id: '1', name: 'Ada', born: '1815-12-10', extra: 'ignored' },
        { id: '2', name: "Bob'); DROP TABLE x; --", born: '1906-12-09' },
      ],
    );
    expect(ins.error).toBeUndefined();
    expect(ins.out).toEqual([
      { id: 1, name: 'Ada' },
      { id: 2, name: "Bob'); DROP TABLE x; --" },
    ]);
    const upd = await runNode(
      p,
      v1({
        operation: 'update',
        updateKey: 'id',
        columns: 'name',
        additionalFields: { mode: 'independently' },
      }),
      [{ id: 2, name: 'Grace' }],
    );
    expect(upd.out[0]).toMatchObject({ id: 2, name: 'Grace' });
    await admin.query(`UPDATE ${t1} SET big = 9007199254740993 WHERE id = 1`);
    const q = await runNode(
      p,
      v1({
        operation: 'executeQuery',
        query: `SELECT id, name, big FROM ${t1} WHERE name = $1 OR id = $2`,
        additionalFields: { queryParams: 'who, n', largeNumbersOutput: 'text' },
      }),
      [{ who: "x' OR '1'='1", n: 1 }],
    );
    expect(q.out).toEqual([{ id: 1, name: 'Ada', big: '9007199254740993' }]);
    // Transaction: a failing item rolls back the others.
    const tx = await runNode(
      p,
      v1({ operation: 'insert', columns: 'id,name', additionalFields: { mode: 'transaction' } }),
      [
        { id: 3, name: 'new' },
        { id: 1, name: 'duplicate' },
      ],
    );
    expect(tx.error).toContain('duplicate key');
    expect((await admin.query(`SELECT count(*)::int AS c FROM ${t1}`)).rows[0].c).toBe(2);
    // A cast is a type name, never SQL.
    const bad = await runNode(p, v1({ operation: 'insert', columns: 'id:int); DROP TABLE x; --' }), [
      { id: 1 },
    ]);
    expect(bad.error).toContain('is not a type to cast');
  });

  it('deletes rows by condition, truncates, drops', async () => {
    const del = await runNode(
      p,
      node({
        operation: 'deleteTable',
        deleteCommand: 'delete',
        where: { values: [{ column: 'id', value: 4 }] },
      }),
    );
    expect(del.out).toEqual([{ success: true }]);
    expect((await admin.query(`SELECT id FROM ${qualified()} ORDER BY id`)).rows.map((r) => r.id)).toEqual([
      1, 2, 3,
    ]);
    await runNode(p, node({ operation: 'deleteTable', deleteCommand: 'truncate', restartSequences: true }));
    expect((await admin.query(`SELECT count(*)::int AS c FROM ${qualified()}`)).rows[0].c).toBe(0);
    await runNode(p, node({ operation: 'deleteTable', deleteCommand: 'drop', options: { cascade: true } }));
    const left = await admin.query(
      'SELECT count(*)::int AS c FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2',
      [schema, table],
    );
    expect(left.rows[0].c).toBe(0);
  });
});

describe('the Postgres node and the outbound guard', () => {
  let p: TestPlatform;
  afterAll(() => p?.close());

  it('refuses a credential pointing at a private or loopback address unless allowed', async () => {
    p = await workflowPlatform('sqlite', { OUTBOUND_ALLOW_HOSTS: '' });
    const cred = await createCredential(p, 'pg local', 'postgres', {
      host: '127.0.0.1',
      database: 'test',
      user: 'postgres',
    });
    const res = await runNode(p, {
      type: 'postgres',
      typeVersion: 2.6,
      parameters: { operation: 'executeQuery', query: 'SELECT 1', options: {} },
      credentials: { postgres: { id: cred, name: 'pg local' } },
    });
    expect(res.error).toContain("Host '127.0.0.1' is not allowed");
  });
});
