import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects, uniqueName } from '../helpers/services.js';
import { runNode } from './db-support.js';
import { workflowPlatform } from './support.js';

// The machine's MariaDB (Debian's mariadb-server; .ci/run starts it): root over TCP on 127.0.0.1,
// database `test`, a table of its own per platform dialect.
const MYSQL = { host: '127.0.0.1', port: 3306, user: 'root', password: '', database: 'test' };
const admin = await mysql.createConnection(MYSQL).catch((err: Error) => {
  if (process.env.CI === 'true') throw new Error(`MariaDB is not running on 127.0.0.1:3306: ${err.message}`);
  return null;
});
afterAll(() => admin?.end());

describe.skipIf(!admin).each(await testDialects())(
  "n8n's MySQL node against MariaDB, platform on %s",
  (dialect) => {
    let p: TestPlatform;
    let cred = '';
    const table = uniqueName(`people_${dialect}`);
    const db = admin as mysql.Connection;
    const node = (parameters: Record<string, unknown>, typeVersion = 2.4) => ({
      type: 'mySql',
      typeVersion,
      parameters: { table: { __rl: true, mode: 'list', value: table }, options: {}, ...parameters },
      credentials: { mySql: { id: cred, name: 'maria' } },
    });
    const rows = async () =>
      (
        (await db.query(`SELECT id, name, score FROM \`${table}\` ORDER BY id`))[0] as Array<
          Record<string, unknown>
        >
      ).map((r) => ({ ...r }));

    beforeAll(async () => {
      p = await workflowPlatform(dialect);
      const res = await p.request({
        method: 'POST',
        url: '/api/v1/credentials',
        payload: {
          name: 'maria',
          type: 'mySql',
          data: { host: '127.0.0.1', port: 3306, database: 'test', user: 'root', password: '', ssl: false },
        },
      });
      expect(res.statusCode, res.body).toBe(201);
      cred = res.json().id;
      await db.query(
        `CREATE TABLE \`${table}\` (id INT PRIMARY KEY, name VARCHAR(200) NOT NULL, score INT NULL)`,
      );
    });
    afterAll(async () => {
      await db.query(`DROP TABLE IF EXISTS \`${table}\``);
      await p.close();
    });

    it('inserts items (auto-mapped and v2.0 Define Below), skipping conflicts with IGNORE', async () => {
      const res = await runNode(
        p,
        node({ operation: 'insert', columns: { mappingMode: 'autoMapInputData' } }),
        [
          { id: 1, name: 'Ada', score: 9 },
          { id: 2, name: 'Grace' },
        ],
      );
      expect(res.error).toBeUndefined();
      expect(res.out).toEqual([{ success: true }]);
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
      expect(legacy.error).toBeUndefined();
      await runNode(
        p,
        node({
          operation: 'insert',
          columns: { mappingMode: 'autoMapInputData' },
          options: { skipOnConflict: true },
        }),
        [{ id: 1, name: 'dup' }],
      );
      expect(await rows()).toEqual([
        { id: 1, name: 'Ada', score: 9 },
        { id: 2, name: 'Grace', score: null },
        { id: 3, name: 'Linus', score: null },
      ]);
      const unknown = await runNode(
        p,
        node({ operation: 'insert', columns: { mappingMode: 'autoMapInputData' } }),
        [{ id: 5, nope: 1 }],
      );
      expect(unknown.error).toBe("Column 'nope' does not exist in selected table");
    });

    it('executes a query with $1 parameters (prepared): $json cannot inject SQL', async () => {
      const evil = `x'; DROP TABLE \`${table}\`; -- \\' or 1=1`;
      const res = await runNode(
        p,
        node({
          operation: 'executeQuery',
          query: 'SELECT name, $1 AS said FROM $2:name WHERE id = $3',
          options: { queryReplacement: `={{ $json.text }}, ${table}, {{ $json.id }}` },
        }),
        [{ text: evil, id: 1 }],
      );
      expect(res.error).toBeUndefined();
      expect(res.out).toEqual([{ name: 'Ada', said: evil }]);
      expect((await rows()).length).toBe(3);
      const write = await runNode(
        p,
        node({ operation: 'executeQuery', query: `UPDATE \`${table}\` SET score = 1 WHERE id = -1` }),
      );
      expect(write.out).toEqual([{ success: true }]);
    });

    it('updates and upserts by matching columns', async () => {
      await runNode(
        p,
        node({ operation: 'update', columns: { mappingMode: 'autoMapInputData', matchingColumns: ['id'] } }),
        [{ id: 2, score: 7 }],
      );
      await runNode(
        p,
        node({ operation: 'upsert', columns: { mappingMode: 'autoMapInputData', matchingColumns: ['id'] } }),
        [
          { id: 1, name: 'Ada Lovelace' },
          { id: 4, name: 'Barbara', score: 5 },
        ],
      );
      expect(await rows()).toEqual([
        { id: 1, name: 'Ada Lovelace', score: 9 },
        { id: 2, name: 'Grace', score: 7 },
        { id: 3, name: 'Linus', score: null },
        { id: 4, name: 'Barbara', score: 5 },
      ]);
    });

    it('selects with conditions, sort, limit and distinct', async () => {
      const res = await runNode(
        p,
        node({
          operation: 'select',
          where: { values: [{ column: 'score', condition: '>=', value: 5 }] },
          sort: { values: [{ column: 'id', direction: 'DESC' }] },
          limit: 2,
          options: { outputColumns: ['id', 'name'] },
        }),
      );
      expect(res.out).toEqual([
        { id: 4, name: 'Barbara' },
        { id: 2, name: 'Grace' },
      ]);
    });

    it('bounds a long query by its timeout and a huge result by maxRows', async () => {
      const t0 = Date.now();
      const slow = await runNode(
        p,
        node({ operation: 'executeQuery', query: 'SELECT SLEEP(60)', options: { queryTimeout: 1 } }),
      );
      expect(slow.error).toContain('ran past its time limit');
      const huge = await runNode(
        p,
        node({
          operation: 'executeQuery',
          query: 'SELECT a.seq FROM seq_1_to_1000 a, seq_1_to_1000 b',
          options: { maxRows: 500 },
        }),
      );
      expect(huge.error).toBe('The query returned more than 500 rows');
      expect(Date.now() - t0).toBeLessThan(15_000);
      const ok = await runNode(p, node({ operation: 'executeQuery', query: 'SELECT 1 AS one' }));
      expect(ok.out).toEqual([{ one: 1 }]);
    });

    it('deletes rows by condition, truncates, drops', async () => {
      await runNode(
        p,
        node({
          operation: 'deleteTable',
          deleteCommand: 'delete',
          where: { values: [{ column: 'id', value: 4 }] },
        }),
      );
      expect((await rows()).map((r) => r.id)).toEqual([1, 2, 3]);
      await runNode(p, node({ operation: 'deleteTable', deleteCommand: 'truncate' }));
      expect(await rows()).toEqual([]);
      await runNode(p, node({ operation: 'deleteTable', deleteCommand: 'drop' }));
      const [left] = await db.query(
        'SELECT COUNT(*) AS c FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?',
        [table],
      );
      expect((left as Array<{ c: number }>)[0]?.c).toBe(0);
    });

    it('runs v1 (templates before 2.0): insert with IGNORE, update by key, a query per item', async () => {
      const t1 = `${table}_v1`;
      await db.query(`CREATE TABLE \`${t1}\` (id INT PRIMARY KEY, name VARCHAR(200), score INT NULL)`);
      try {
        const v1 = (parameters: Record<string, unknown>) => ({
          ...node({}, 1),
          parameters: { options: {}, ...parameters },
        });
        const ins = await runNode(
          p,
          v1({ table: t1, columns: 'id, name', options: { ignore: true, priority: 'LOW_PRIORITY' } }),
          [
            { id: 1, name: 'Ada', other: 'x' },
            { id: 2, name: 'Grace' },
            { id: 1, name: 'dup' },
          ],
        );
        expect(ins.error).toBeUndefined();
        expect(ins.out).toHaveLength(1);
        expect(ins.out[0]).toMatchObject({ affectedRows: 2 });
        const upd = await runNode(
          p,
          v1({
            operation: 'update',
            table: { __rl: true, mode: 'name', value: t1 },
            updateKey: 'id',
            columns: 'score',
          }),
          [
            { id: 2, score: 7 },
            { id: 9, score: 1 },
          ],
        );
        expect(upd.error).toBeUndefined();
        expect(upd.out.map((r) => r.affectedRows)).toEqual([1, 0]);
        const q = await runNode(
          p,
          v1({
            operation: 'executeQuery',
            query: `=SELECT id, name, score FROM \`${t1}\` WHERE id = {{ $json.id }}`,
          }),
          [{ id: 1 }, { id: 2 }],
        );
        expect(q.out).toEqual([
          { id: 1, name: 'Ada', score: null },
          { id: 2, name: 'Grace', score: 7 },
        ]);
        const bad = await runNode(p, v1({ table: t1, columns: 'id, nope' }), [{ id: 5 }]);
        expect(bad.error).toMatch(/nope/);
      } finally {
        await db.query(`DROP TABLE IF EXISTS \`${t1}\``);
      }
    });
  },
);
