import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { PG_URL, testDialects, uniqueName } from '../helpers/services.js';
import { agentOutput, runAgentWithTool } from './support/ai-agent-run.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { createCredential, workflowPlatform } from './support.js';

/**
 * n8n's "as tool" twins of nodes (`postgresTool`): an AI Agent calls the Postgres node with the
 * model's `$fromAI()` arguments, against the test PostgreSQL; the model (a local OpenAI upstream)
 * reads the rows as the tool result.
 */

const openai = new FakeOpenAi();
const schema = uniqueName('n8n_pgtool');
const admin = new pg.Client({ connectionString: PG_URL });

beforeAll(async () => {
  await openai.start();
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`CREATE TABLE ${schema}.cities (name text PRIMARY KEY, temp int)`);
  await admin.query(`INSERT INTO ${schema}.cities VALUES ('Paris', 21), ('Lyon', 25)`);
});
afterAll(async () => {
  await openai.stop();
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
});
beforeEach(() => openai.reset());

const toolResult = (i: number) =>
  ((openai.requests[i]?.messages ?? []) as Array<{ role: string; content: string }>).at(-1);
const offered = (i: number) =>
  (
    (openai.requests[i]?.tools ?? []) as Array<{
      function: { name: string; description: string; parameters: unknown };
    }>
  ).map((t) => t.function);

describe.each(await testDialects())('Postgres as an agent tool on %s', (dialect) => {
  let p: TestPlatform;
  let openAiCred = '';
  let pgCred = '';

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    openAiCred = await createCredential(p, 'openai', 'openAiApi', {
      apiKey: 'sk-test',
      url: `${openai.base}/v1`,
    });
    pgCred = await createCredential(p, 'pg', 'postgres', {
      host: '127.0.0.1',
      database: 'test',
      user: 'postgres',
    });
  });
  afterAll(() => p.close());

  const postgresTool = (parameters: Record<string, unknown>) => ({
    name: 'Read cities',
    type: 'n8n-nodes-base.postgresTool',
    typeVersion: 2.5,
    parameters,
    credentials: { postgres: { id: pgCred, name: 'pg' } },
  });

  it('runs a query with $fromAI values as query parameters (data, not SQL), rows back to the model', async () => {
    openai.queue(
      toolCalls([{ id: 'c1', name: 'Read_cities', arguments: JSON.stringify({ city: "Paris' OR '1'='1" }) }]),
      toolCalls([{ id: 'c2', name: 'Read_cities', arguments: JSON.stringify({ city: 'Lyon' }) }]),
      completion('25 degrees in Lyon.'),
    );
    const { status, execution } = await runAgentWithTool(
      p,
      openAiCred,
      postgresTool({
        descriptionType: 'manual',
        toolDescription: 'Temperature of a city',
        operation: 'executeQuery',
        query: `SELECT name, temp FROM ${schema}.cities WHERE name = $1`,
        options: { queryReplacement: "={{ $fromAI('city', 'The city name', 'string') }}" },
      }),
      { typeVersion: 2, text: 'Weather in Lyon?', maxIterations: 4 },
    );
    expect(status).toBe(200);
    expect(execution.data.resultData.error ?? null).toBeNull();
    expect(agentOutput(execution)).toEqual({ output: '25 degrees in Lyon.' });
    expect(offered(0)).toEqual([
      {
        name: 'Read_cities',
        description: 'Temperature of a city',
        parameters: {
          type: 'object',
          properties: { city: { type: 'string', description: 'The city name' } },
          required: ['city'],
        },
      },
    ]);
    // The injection attempt is a value: no row matches it.
    expect(JSON.parse(toolResult(1)?.content ?? 'null')).toEqual([]);
    expect(JSON.parse(toolResult(2)?.content ?? 'null')).toEqual([{ name: 'Lyon', temp: 25 }]);
  });

  it('inserts with $fromAI in the column values; a missing argument is told to the model', async () => {
    openai.queue(
      toolCalls([{ id: 'c1', name: 'Read_cities', arguments: JSON.stringify({}) }]),
      toolCalls([
        { id: 'c2', name: 'Read_cities', arguments: JSON.stringify({ name: `Nice-${dialect}`, temp: 28 }) },
      ]),
      completion('Saved.'),
    );
    const { execution } = await runAgentWithTool(
      p,
      openAiCred,
      postgresTool({
        operation: 'insert',
        schema: { __rl: true, mode: 'list', value: schema },
        table: { __rl: true, mode: 'list', value: 'cities' },
        columns: {
          mappingMode: 'defineBelow',
          value: {
            name: "={{ $fromAI('name', 'City', 'string') }}",
            temp: "={{ $fromAI('temp', 'Degrees', 'number') }}",
          },
          matchingColumns: [],
          schema: [],
        },
        options: {},
      }),
      { typeVersion: 2, text: 'Save Nice at 28', maxIterations: 4 },
    );
    expect(execution.data.resultData.error ?? null).toBeNull();
    expect(agentOutput(execution)).toEqual({ output: 'Saved.' });
    expect(offered(0)[0]?.description).toBe("Postgres: insert (node 'Read cities')");
    expect(toolResult(1)?.content).toContain("the argument 'name' is missing");
    const { rows } = await admin.query(`SELECT temp FROM ${schema}.cities WHERE name = $1`, [
      `Nice-${dialect}`,
    ]);
    expect(rows).toEqual([{ temp: 28 }]);
  });
});
