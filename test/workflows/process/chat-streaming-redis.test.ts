import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Dialect } from '../../../src/core/db/types.js';
import { generateKey } from '../../../src/modules/auth/key-format.js';
import { testRedis } from '../../helpers/platform.js';
import { PG_URL, REDIS_URL, redisAvailable, testDialects, uniqueName } from '../../helpers/services.js';
import { HeldUpstream } from '../support/held-upstream.js';
import { reader, streamingAgent } from '../support/streamed-chat.js';
import {
  apiClient,
  baseEnv,
  cleanup,
  createAndActivate,
  eventually,
  startProcess,
  startServer,
  tempDir,
} from './processes.js';

/**
 * A streamed Chat Trigger answer whose execution runs in another process: `serve --no-worker` takes
 * the chat message and holds the response open, a `worker` process runs the AI Agent, and the chunks
 * cross over Redis pub/sub (`ExecutionWaiters.chunk` → `<done channel>:chunk`). The upstream holds its
 * stream until the client has read the first token, so that token can only have come through Redis
 * while the model was still answering. Under CI=true a missing Redis fails the suite.
 */

const hasRedis = await redisAvailable();
const dialects = hasRedis ? await testDialects() : [];
// Processes share PostgreSQL in production; SQLite only where PostgreSQL is not reachable.
const processDialect: Dialect[] = dialects.includes('postgres') ? ['postgres'] : dialects;
const prefixes: string[] = [];
const schemas: string[] = [];
const upstream = new HeldUpstream();

async function pgQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

async function databaseEnv(dialect: Dialect, dataDir: string): Promise<Record<string, string>> {
  if (dialect === 'sqlite') return {};
  const schema = uniqueName('chs');
  schemas.push(schema);
  await pgQuery(`create schema "${schema}"`);
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { DATABASE_URL: url.toString(), DATA_DIR: path.join(dataDir, 'unused') };
}

afterAll(async () => {
  await cleanup();
  await upstream.stop().catch(() => undefined);
  for (const schema of schemas) await pgQuery(`drop schema if exists "${schema}" cascade`);
  if (prefixes.length > 0) {
    const redis = testRedis();
    try {
      for (const prefix of prefixes) {
        const keys = await redis.keys(`${prefix}:*`);
        if (keys.length > 0) await redis.del(...keys);
      }
    } finally {
      redis.disconnect();
    }
  }
});

describe.skipIf(!hasRedis).each(processDialect)(
  'Chat Trigger streaming across processes on %s',
  (dialect) => {
    it("a worker's chunks reach the API process's caller over Redis, token by token", async () => {
      await upstream.start();
      const key = generateKey('production');
      const dataDir = tempDir();
      const prefix = uniqueName('cs');
      prefixes.push(prefix);
      const env = {
        ...baseEnv(dataDir),
        ...(await databaseEnv(dialect, dataDir)),
        PLATFORM_BOOTSTRAP_KEY: key,
        REDIS_URL,
        QUEUE_PREFIX: prefix,
      };
      const server = await startServer(['serve', '--no-worker'], env);
      const worker = startProcess(['worker'], env);
      await worker.waitFor(/workflow worker started/);
      const api = apiClient(server.url, key);
      const cred = await api('POST', '/api/v1/credentials', {
        name: 'openai',
        type: 'openAiApi',
        data: { apiKey: 'sk-test', url: `${upstream.base}/v1` },
      });
      expect(cred.status).toBe(201);
      const workflowId = await createAndActivate(
        api,
        streamingAgent('redis-stream', [
          {
            name: 'OpenAI Chat Model',
            type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
            typeVersion: 1.2,
            parameters: { model: { __rl: true, value: 'gpt-4o-mini', mode: 'list' }, options: {} },
            credentials: { openAiApi: { id: cred.json.id, name: 'openai' } },
          },
        ]),
      );

      const res = await fetch(`${server.url}/webhook/redis-stream/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'sendMessage', sessionId: 's-1', chatInput: 'What is 2+2?' }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const read = reader(res);
      const first = read.until((c) => c.type === 'item' && c.content === 'Let me ');
      await upstream.answerStream(
        ['Let me ', 'compute.'],
        [{ name: 'calculator', arguments: '{"input":"2+2"}' }],
        first,
      );
      await read.until((c) => c.type === 'item' && c.content === 'compute.');
      const second = read.until((c) => c.type === 'item' && c.content === 'It is ');
      await upstream.answerStream(['It is ', '4.'], [], second);
      const chunks = await read.done;
      expect(chunks.map((c) => [c.type, c.content])).toEqual([
        ['begin', undefined],
        ['item', 'Let me '],
        ['item', 'compute.'],
        ['item', 'It is '],
        ['item', '4.'],
        ['end', undefined],
      ]);
      for (const c of chunks)
        expect(c.metadata).toMatchObject({ nodeId: 'agent-node', nodeName: 'AI Agent' });

      // The worker ran it (the API process has none) and stored its outcome.
      const execution = await eventually(
        async () => {
          const list = await api('GET', `/api/v1/executions?workflowId=${workflowId}`);
          const row = list.json.data[0] as { status: string } | undefined;
          return row && !['new', 'running'].includes(row.status) ? row : undefined;
        },
        30_000,
        'the execution to end',
      );
      expect(execution.status).toBe('success');
      expect(await worker.kill('SIGTERM')).toBe(0);
      expect(await server.kill('SIGTERM')).toBe(0);
    }, 120_000);
  },
);
