import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { PG_URL, REDIS_URL, testDialects, uniqueName } from '../helpers/services.js';
import type { Execution } from './db-support.js';
import { aiWorkflow, LC } from './support/ai-workflow.js';
import { completion, FakeOpenAi } from './support/fake-openai.js';
import { createCredential, createWorkflow, workflowPlatform } from './support.js';

/**
 * n8n's Postgres and Redis Chat Memories against the real servers, through the platform (its
 * credentials and outbound-address guard), with an AI Agent on a local OpenAI upstream: what one run
 * saves in LangChain's stored shape, the next run reads back as earlier turns.
 */

const admin = new pg.Client({ connectionString: PG_URL });
const redis = new Redis(REDIS_URL);
const openai = new FakeOpenAi();
const tables: string[] = [];
const keys: string[] = [];

beforeAll(async () => {
  await Promise.all([admin.connect(), openai.start()]);
});
afterAll(async () => {
  for (const t of tables) await admin.query(`DROP TABLE IF EXISTS "${t}"`);
  if (keys.length > 0) await redis.del(...keys);
  await Promise.all([admin.end(), redis.quit(), openai.stop()]);
});
beforeEach(() => openai.reset());

const pgUrl = new URL(PG_URL);
/** The outbound-address guard's refusal of a link-local (cloud metadata) address. */
const GUARD_REFUSAL = /not allowed|private|refused|blocked/i;
const redisUrl = new URL(REDIS_URL);

describe.each(await testDialects())('chat memories on the real servers, platform on %s', (dialect) => {
  let p: TestPlatform;
  const creds = { openai: '', postgres: '', redis: '' };

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    creds.openai = await createCredential(p, 'openai', 'openAiApi', {
      apiKey: 'sk-test',
      url: `${openai.base}/v1`,
    });
    creds.postgres = await createCredential(p, 'pg', 'postgres', {
      host: pgUrl.hostname,
      port: pgUrl.port || '5432',
      database: pgUrl.pathname.slice(1),
      user: decodeURIComponent(pgUrl.username),
      password: decodeURIComponent(pgUrl.password),
    });
    creds.redis = await createCredential(p, 'redis', 'redis', {
      host: redisUrl.hostname,
      port: redisUrl.port || '6379',
      database: '0',
    });
  });
  afterAll(() => p.close());

  async function runAgent(memory: Record<string, unknown>, q: string): Promise<Execution> {
    const wf = aiWorkflow(
      [
        {
          name: 'AI Agent',
          type: `${LC}.agent`,
          typeVersion: 3.1,
          parameters: { promptType: 'define', text: '={{ $json.q }}', options: {} },
        },
        {
          name: 'Model',
          type: `${LC}.lmChatOpenAi`,
          typeVersion: 1.2,
          parameters: { model: { __rl: true, mode: 'list', value: 'gpt-4o-mini' }, options: {} },
          credentials: { openAiApi: { id: creds.openai, name: 'openai' } },
        },
        { name: 'Memory', ...memory } as never,
      ],
      [
        ['Trigger', 'AI Agent'],
        ['Model', 'AI Agent', 'ai_languageModel'],
        ['Memory', 'AI Agent', 'ai_memory'],
      ],
    );
    const id = await createWorkflow(p, {
      name: wf.name,
      nodes: wf.nodes,
      connections: wf.connections,
      settings: {},
    });
    const res = await p.request({
      method: 'POST',
      url: `/api/v1/workflows/${id}/run`,
      payload: { startNode: 'AI Agent', items: [{ json: { q } }] },
    });
    expect(res.statusCode).toBe(200);
    return res.json() as Execution;
  }

  const outputOf = (e: Execution) => e.data.resultData.runData['AI Agent']?.[0]?.data?.main[0]?.[0]?.json;

  it('Postgres Chat Memory: LangChain rows in the table, read back as the earlier turns', async () => {
    const table = uniqueName(`chat_${dialect}`);
    tables.push(table);
    const memory = {
      type: `${LC}.memoryPostgresChat`,
      typeVersion: 1.3,
      parameters: {
        sessionIdType: 'customKey',
        sessionKey: 'session-7',
        tableName: table,
        contextWindowLength: 1,
      },
      credentials: { postgres: { id: creds.postgres, name: 'pg' } },
    };
    openai.queue(completion('Hello Ada.'));
    const first = await runAgent(memory, 'My name is Ada.');
    expect(first.data.resultData.error ?? null).toBeNull();
    expect(outputOf(first)).toEqual({ output: 'Hello Ada.' });
    const rows = await admin.query(`SELECT session_id, message FROM "${table}" ORDER BY id`);
    expect(rows.rows).toEqual([
      {
        session_id: 'session-7',
        message: { type: 'human', content: 'My name is Ada.', additional_kwargs: {}, response_metadata: {} },
      },
      {
        session_id: 'session-7',
        message: {
          type: 'ai',
          content: 'Hello Ada.',
          additional_kwargs: {},
          response_metadata: {},
          tool_calls: [],
          invalid_tool_calls: [],
        },
      },
    ]);
    // Another session's rows are not read; the window keeps the last exchange only.
    await admin.query(`INSERT INTO "${table}" (session_id, message) VALUES ('other', $1)`, [
      JSON.stringify({ type: 'human', content: 'secret of another session' }),
    ]);
    openai.queue(completion('You are Ada.'));
    const second = await runAgent(memory, 'Who am I?');
    expect(outputOf(second)).toEqual({ output: 'You are Ada.' });
    const messages = openai.requests[1]?.messages as Array<{ role: string; content: string }>;
    expect(messages.slice(-3)).toEqual([
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Hello Ada.' },
      { role: 'user', content: 'Who am I?' },
    ]);
    expect(JSON.stringify(messages)).not.toContain('secret of another session');
    openai.queue(completion('Still Ada.'));
    await runAgent(memory, 'Again?');
    const third = openai.requests[2]?.messages as Array<{ role: string; content: string }>;
    expect(third.filter((m) => m.role !== 'system').map((m) => m.content)).toEqual([
      'Who am I?',
      'You are Ada.',
      'Again?',
    ]);
  });

  it('Postgres Chat Memory: a table name that is not a plain SQL name is refused', async () => {
    const e = await runAgent(
      {
        type: `${LC}.memoryPostgresChat`,
        typeVersion: 1.3,
        parameters: { sessionIdType: 'customKey', sessionKey: 's', tableName: 'x"; DROP TABLE y; --' },
        credentials: { postgres: { id: creds.postgres, name: 'pg' } },
      },
      'Hi',
    );
    expect(e.data.resultData.error?.message).toContain('is not a plain SQL name');
    expect(openai.requests).toHaveLength(0);
  });

  it('Redis Chat Memory: a list of LangChain messages under the session, with its TTL, read back', async () => {
    const key = uniqueName(`chat_${dialect}`);
    keys.push(key);
    const memory = {
      type: `${LC}.memoryRedisChat`,
      typeVersion: 1.5,
      parameters: { sessionIdType: 'customKey', sessionKey: key, sessionTTL: 600, contextWindowLength: 5 },
      credentials: { redis: { id: creds.redis, name: 'redis' } },
    };
    openai.queue(completion('Noted: blue.'));
    const first = await runAgent(memory, 'My colour is blue.');
    expect(outputOf(first)).toEqual({ output: 'Noted: blue.' });
    const stored = (await redis.lrange(key, 0, -1)).map((s) => JSON.parse(s));
    expect(stored).toEqual([
      {
        type: 'ai',
        data: {
          content: 'Noted: blue.',
          additional_kwargs: {},
          response_metadata: {},
          tool_calls: [],
          invalid_tool_calls: [],
        },
      },
      {
        type: 'human',
        data: { content: 'My colour is blue.', additional_kwargs: {}, response_metadata: {} },
      },
    ]);
    expect(await redis.ttl(key)).toBeGreaterThan(500);
    openai.queue(completion('Blue.'));
    await runAgent(memory, 'Which colour?');
    const messages = openai.requests[1]?.messages as Array<{ role: string; content: string }>;
    expect(messages.slice(-3)).toEqual([
      { role: 'user', content: 'My colour is blue.' },
      { role: 'assistant', content: 'Noted: blue.' },
      { role: 'user', content: 'Which colour?' },
    ]);
  });

  it('a memory on a server the guard refuses, or with no credential, fails the node clearly', async () => {
    const e = await runAgent(
      {
        type: `${LC}.memoryRedisChat`,
        typeVersion: 1.5,
        parameters: { sessionIdType: 'customKey', sessionKey: 's' },
      },
      'Hi',
    );
    expect(e.data.resultData.error?.message).toContain('Node does not have any credentials set for "redis"');
    const metadata = await createCredential(p, 'metadata', 'redis', {
      host: '169.254.169.254',
      port: '6379',
    });
    const refused = await runAgent(
      {
        type: `${LC}.memoryRedisChat`,
        typeVersion: 1.5,
        parameters: { sessionIdType: 'customKey', sessionKey: 's' },
        credentials: { redis: { id: metadata, name: 'metadata' } },
      },
      'Hi',
    );
    expect(refused.data.resultData.error?.message).toMatch(GUARD_REFUSAL);
    expect(openai.requests).toHaveLength(0);
  });
});
