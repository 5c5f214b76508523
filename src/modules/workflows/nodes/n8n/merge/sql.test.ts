import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Json } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps({ codeTimeoutMs: 3_000 }), defaultNodeRegistry);
const split = (field: string) => ({
  name: `in_${field}`,
  type: 'n8n-nodes-base.splitOut',
  typeVersion: 1,
  parameters: { fieldToSplitOut: field },
});

/** trigger → one Split Out per input → Merge v3 in SQL mode (inputs in order). */
async function sql(parameters: Record<string, unknown>, inputs: Record<string, Json[]>, version = 3) {
  const fields = Object.keys(inputs);
  const def = workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      ...fields.map(split),
      {
        name: 'M',
        type: 'n8n-nodes-base.merge',
        typeVersion: version,
        parameters: { mode: 'combineBySql', ...parameters },
      },
    ],
    fields.flatMap(
      (f, i): Array<[string, string, number?, number?]> => [
        ['T', `in_${f}`],
        [`in_${f}`, 'M', 0, i],
      ],
    ),
  );
  expect(engine.validate(def)).toEqual([]);
  const out = await engine.run(def, { nodeName: 'T', items: [{ json: inputs }] }, ctx);
  return { json: jsonOf(out.state, 'M'), error: out.state.error };
}

// n8n's own test data (packages/nodes-base/nodes/Merge/test/v3/operations.test.ts).
const input1 = [
  { id: 1, data: 'a', name: 'Sam' },
  { id: 2, data: 'b', name: 'Dan' },
  { id: 3, data: 'c', name: 'Jon' },
  { id: 6, data: 'e', name: 'Ron' },
  { id: 7, data: 'f', name: 'Joe' },
];
const input2 = [
  { id: 1, data: 'aa', country: 'PL' },
  { id: 2, data: 'bb', country: 'FR' },
  { id: 3, data: 'cc', country: 'UA' },
  { id: 4, data: 'ee', country: 'US' },
  { id: 5, data: 'ff', country: 'ES' },
];
const both = { a: input1, b: input2 };

describe('Merge v3 combineBySql (alasql in the sandbox)', () => {
  it("gives n8n's results for its joins", async () => {
    const left = await sql(
      { query: 'SELECT *, input1.data as data_1\nFROM input1\nLEFT JOIN input2\nON input1.id = input2.id\n' },
      both,
    );
    expect(left.json[0]).toEqual({ data_1: 'a', id: 1, data: 'aa', name: 'Sam', country: 'PL' });
    expect(left.json).toHaveLength(5);
    const right = await sql(
      { query: 'SELECT *\nFROM input1\nRIGHT JOIN input2\nON input1.id = input2.id;\n' },
      both,
    );
    expect(right.json).toHaveLength(5);
    expect(right.json[4]).toEqual({ id: 5, data: 'ff', country: 'ES' });
    const inner = await sql(
      { query: 'SELECT * FROM input1 INNER JOIN input2 ON input1.id = input2.id' },
      both,
    );
    expect(inner.json[2]).toEqual({ id: 3, data: 'cc', name: 'Jon', country: 'UA' });
    const outer = await sql(
      { query: 'SELECT * FROM input1 FULL OUTER JOIN input2 ON input1.id = input2.id' },
      both,
    );
    expect(outer.json).toHaveLength(7);
    const cross = await sql(
      { query: 'SELECT *, input1.data AS data_1\nFROM input1\nCROSS JOIN input2;\n' },
      both,
    );
    expect(cross.json).toHaveLength(25);
  });

  it("runs n8n's default query when an export leaves it out, and MySQL-style IF as templates use it", async () => {
    const people = {
      a: [
        { name: 'ada', tags: 'x' },
        { name: 'bob', tags: 'y' },
      ],
      b: [{ id: 'ada', value: 'x', n: { deep: [1] } }],
    };
    expect((await sql({}, people)).json).toEqual([
      { name: 'ada', tags: 'x', id: 'ada', value: 'x', n: { deep: [1] } },
      { name: 'bob', tags: 'y' },
    ]);
    const exists = await sql(
      {
        query:
          'SELECT input1.tags AS name, -- the tag\n IF(input2.value IS NOT NULL, true, false) AS exist, input2.id AS tag_id\nFROM input1 LEFT JOIN input2 ON input1.tags = input2.value',
      },
      people,
      3.1,
    );
    expect(exists.json).toEqual([
      { name: 'x', exist: true, tag_id: 'ada' },
      { name: 'y', exist: false },
    ]);
  });

  it('evaluates {{ }} parts of the query first, as n8n does', async () => {
    const { json } = await sql({ query: 'SELECT name FROM input1 WHERE id = {{ 1 + 1 }}' }, both);
    expect(json).toEqual([{ name: 'Dan' }]);
  });

  it('answers an empty result per version: { success: true } up to 3.1, nothing in 3.2 unless asked', async () => {
    const none = { a: [{ id: 1 }], b: [] };
    const query = 'SELECT id FROM input1 WHERE id > 5';
    expect((await sql({ query }, none, 3.1)).json).toEqual([{ success: true }]);
    expect((await sql({ query }, none, 3.2)).json).toEqual([]);
    expect((await sql({ query, options: { emptyQueryResult: 'success' } }, none, 3.2)).json).toEqual([
      { success: true },
    ]);
  });

  it("fails the node with n8n's words on a syntax error or a missing table", async () => {
    const bad = await sql({ query: 'SELECTTT * FROM input1' }, both);
    expect(bad.error).toMatchObject({
      message: 'Issue while executing query',
      description: expect.stringContaining('Parse error'),
    });
    const missing = await sql({ query: 'SELECT * FROM input3' }, both);
    expect(missing.error).toMatchObject({ description: 'Table does not exist: input3' });
  });

  it('refuses every file, URL and module statement, and writes nothing', async () => {
    const out = join(tmpdir(), `merge-sql-${process.pid}.csv`);
    const escapes = [
      "SELECT * FROM CSV('/etc/passwd')",
      "SELECT * FROM JSON('/etc/passwd')",
      "SELECT * FROM FILE('/etc/passwd')",
      "SELECT * FROM TXT('/etc/passwd')",
      "SELECT * FROM XLSX('/etc/passwd')",
      "SELECT * FROM CSV('http://127.0.0.1:1/x')",
      `SELECT * INTO CSV('${out}') FROM input1`,
      `SELECT * INTO JSON('${out}') FROM input1`,
      "REQUIRE 'fs'",
      "SOURCE '/etc/passwd'",
      `ATTACH FILESTORAGE DATABASE x('${out}')`,
    ];
    for (const query of escapes) {
      const { error } = await sql({ query }, both);
      expect(error, query).toMatchObject({ message: 'Issue while executing query' });
    }
    expect(existsSync(out)).toBe(false);
  });

  it('runs JavaScript inside the sandbox only: no host objects there', async () => {
    const { json } = await sql(
      {
        query:
          'SELECT ``[typeof require, typeof process, typeof fetch, typeof XMLHttpRequest].join()`` AS v FROM input1 WHERE id = 1',
      },
      both,
    );
    expect(json).toEqual([{ v: 'undefined,undefined,undefined,undefined' }]);
  });

  it('stops a runaway query at the time bound, failing only its node', async () => {
    const started = Date.now();
    const { error } = await sql(
      { query: 'SELECT JAVASCRIPT(``(function(){ while (true) {} })()``) AS v FROM input1' },
      both,
    );
    expect(error).toMatchObject({
      message: 'Issue while executing query',
      description: expect.stringMatching(/stopped/),
    });
    expect(Date.now() - started).toBeLessThan(20_000);
    // The next query still runs.
    expect((await sql({ query: 'SELECT name FROM input1 WHERE id = 7' }, both)).json).toEqual([
      { name: 'Joe' },
    ]);
  });

  it('bounds the rows a query may return', async () => {
    const many = Array.from({ length: 400 }, (_, i) => ({ i }));
    const { error } = await sql({ query: 'SELECT * FROM input1 CROSS JOIN input2' }, { a: many, b: many });
    expect(error?.description).toMatch(/more than 100000 rows/);
  });

  it('bounds the characters of its answer: a wide cross join fails in the sandbox, naming the bound', async () => {
    // 300 × 300 rows stay under the row bound, but each joined row carries ~200 characters.
    const wide = Array.from({ length: 300 }, (_, i) => ({ i, pad: 'x'.repeat(100) }));
    const { json, error } = await sql(
      { query: 'SELECT a.pad AS p1, b.pad AS p2 FROM input1 a, input2 b' },
      { a: wide, b: wide },
    );
    expect(json).toEqual([]);
    expect(error).toMatchObject({
      message: 'Issue while executing query',
      description: expect.stringMatching(/more than 5000000 characters of rows \(\d+\)/),
    });
    // Under the bound, the same join answers.
    const narrow = Array.from({ length: 300 }, (_, i) => ({ i }));
    const ok = await sql(
      { query: 'SELECT a.i AS x, b.i AS y FROM input1 a, input2 b' },
      { a: narrow, b: narrow },
    );
    expect(ok.error).toBeNull();
    expect(ok.json).toHaveLength(90_000);
  });
});
