import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { SandboxError, SandboxPool } from '../../../../../core/sandbox/sandbox-pool.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';

/**
 * Merge v3's "SQL Query" mode: n8n runs alasql over tables input1..inputN. alasql can read and write
 * files and URLs (CSV(), JSON(), FILE(), INTO …, REQUIRE, ATTACH) and run JavaScript, so here it runs
 * inside the platform's QuickJS sandbox, never on the server's V8: the guest has no `require`,
 * `process`, `fetch`, `XMLHttpRequest` or file system at all, so every such statement fails inside the
 * guest, and its JavaScript (JAVASCRIPT blocks, user functions) is bounded like a Code node's
 * (time, memory; each call starts from a pristine heap). See docs/decisions.md (issue 30, wave 7).
 */

/** Most characters of the inputs' JSON handed to one query (the guest heap must hold it twice). */
export const MAX_SQL_INPUT_CHARS = 16 * 1024 * 1024;
/** Most rows a query may return (a cross join of two large inputs grows fast). */
export const MAX_SQL_ROWS = 100_000;
/**
 * Most characters of the rows' JSON a query may answer (the Code node's output bound): checked in the
 * guest, so the server's thread never parses more (wide rows stay under MAX_SQL_ROWS yet reach tens of MB).
 */
export const MAX_SQL_OUTPUT_CHARS = 5_000_000;

// Besides the sandbox, alasql's own file and network entry points are replaced as n8n replaces them
// (same message), so such a query fails at once with words a user can act on.
const GUEST = `
(function () {
  function refuse() { throw new Error('File access operations are disabled for security reasons'); }
  var groups = {
    from: ['FILE', 'JSON', 'TXT', 'CSV', 'TAB', 'TSV', 'XLS', 'XLSX', 'ODS', 'XML', 'HTML', 'JSONL', 'NDJSON', 'GEXF', 'METEOR', 'RANGE'],
    into: ['FILE', 'JSON', 'TXT', 'CSV', 'TAB', 'TSV', 'XLS', 'XLSX', 'XLSXML', 'SQL', 'HTML', 'JSONL', 'NDJSON'],
    engines: ['FILE', 'FILESTORAGE', 'LOCALSTORAGE', 'INDEXEDDB', 'SQLITE', 'WEBSQL'],
    utils: ['loadFile', 'loadBinaryFile', 'saveFile', 'removeFile', 'deleteFile', 'fileExists', 'require'],
    fn: ['FILE', 'JSON', 'TXT', 'CSV', 'XLSX', 'XLS', 'LOAD', 'SAVE', 'REQUIRE'],
  };
  for (var g in groups) {
    var target = alasql[g];
    if (!target) continue;
    for (var i = 0; i < groups[g].length; i++) target[groups[g][i]] = refuse;
  }
  if (alasql.yy && alasql.yy.Require) alasql.yy.Require.prototype.execute = refuse;
  if (alasql.yy && alasql.yy.Source) alasql.yy.Source.prototype.execute = refuse;
  if (alasql.yy && alasql.yy.AttachDatabase) alasql.yy.AttachDatabase.prototype.execute = refuse;
  Object.freeze(alasql.fn);
})();
globalThis.mergeSql = function (arg) {
  var input = JSON.parse(arg);
  var db = new alasql.Database('merge');
  try {
    for (var i = 0; i < input.tables.length; i++) {
      db.exec('CREATE TABLE input' + (i + 1));
      db.tables['input' + (i + 1)].data = input.tables[i];
    }
    var result = db.exec(input.query);
    if (result && typeof result.then === 'function')
      throw new Error('this query reads or writes a file or URL, which SQL queries cannot do here');
    if (!Array.isArray(result))
      throw new Error(result === undefined
        ? 'this query reads or writes a file or URL, which SQL queries cannot do here'
        : 'the query returned no rows (only a SELECT gives items)');
    var rows = [];
    for (var r = 0; r < result.length; r++) {
      var item = result[r];
      if (Array.isArray(item)) rows = rows.concat(item);
      else if (item !== null && typeof item === 'object') rows.push(item);
      if (rows.length > input.maxRows) throw new Error('the query returned more than ' + input.maxRows + ' rows');
    }
    var answer = JSON.stringify(rows);
    if (answer.length > input.maxChars)
      throw new Error('the query returned more than ' + input.maxChars + ' characters of rows (' + answer.length + '); select fewer columns or rows');
    return answer;
  } finally {
    delete alasql.databases.merge;
  }
};
`;

let pool: SandboxPool | undefined;

/** One small pool per process, started by the first SQL merge (most processes never run one). */
function sqlSandbox(): SandboxPool {
  if (pool) return pool;
  const require = createRequire(import.meta.url);
  // The browser/UMD bundle: given `module`, it exports there instead of reaching for host globals.
  const bundle = readFileSync(require.resolve('alasql/dist/alasql.min.js'), 'utf8');
  pool = new SandboxPool({
    scripts: [
      {
        name: 'alasql.js',
        code: `(function(){var module={exports:{}};var exports=module.exports;\n${bundle}\n;globalThis.alasql=module.exports;})();`,
      },
      { name: 'merge-sql.js', code: GUEST },
    ],
    workers: 2,
    memoryMb: 128,
    maxPerTenant: 1,
    maxQueue: 200,
  });
  return pool;
}

/** Runs `query` over the inputs' items (input1 = inputs[0] …); rows become items. */
export async function mergeBySql(
  inputs: Item[][],
  query: string,
  bounds: { timeoutMs: number; tenant: string },
): Promise<Item[]> {
  const arg = JSON.stringify({
    tables: inputs.map((items) => items.map((item) => item.json)),
    query,
    maxRows: MAX_SQL_ROWS,
    maxChars: MAX_SQL_OUTPUT_CHARS,
  });
  if (arg.length > MAX_SQL_INPUT_CHARS)
    throw new NodeOperationError('Issue while executing query', {
      description: `the inputs are too large for an SQL query here (${Math.ceil(arg.length / 1048576)} MB of JSON; at most ${MAX_SQL_INPUT_CHARS / 1048576} MB)`,
    });
  let answer: string;
  try {
    answer = await sqlSandbox().call('mergeSql', arg, bounds.timeoutMs, { tenant: bounds.tenant });
  } catch (error) {
    const description =
      error instanceof SandboxError && error.limit !== null
        ? `the query was stopped: it ${error.message}`
        : error instanceof Error
          ? error.message.replace(/^Error: /, '')
          : String(error);
    throw new NodeOperationError('Issue while executing query', { description });
  }
  // The guest refuses a larger answer; this holds even if a guest script were changed.
  if (answer.length > MAX_SQL_OUTPUT_CHARS)
    throw new NodeOperationError('Issue while executing query', {
      description: `the query returned more than ${MAX_SQL_OUTPUT_CHARS} characters of rows`,
    });
  const rows = JSON.parse(answer) as Record<string, Json>[];
  return rows.map((json) => ({ json }));
}
