import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { REDIS_URL } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { FakeEmbeddings, vectorOf } from './support/fake-embeddings.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { FakeTelegram } from './support/fake-telegram.js';
import { FIXTURES } from './support/n8n-fixtures.js';
import { activate, createCredential, createWorkflow, settled, workflowPlatform } from './support.js';

/**
 * Real n8n template exports that talk to Telegram (test/fixtures/n8n/templates/, SOURCES-templates.md),
 * imported unmodified and run through the platform over HTTP: activation registers each Telegram
 * Trigger with a local Bot API server, which delivers updates with the secret token it was given; the
 * replies go back to it. Models, embeddings, the vector table (PGlite with pgvector) and the chat
 * memories (the local Redis) are local. The export's credential ids are the names of the credentials.
 */

const PUBLIC_URL = 'https://bots.example.test';
const telegram = new FakeTelegram();
const openai = new FakeOpenAi();
const embed = new FakeEmbeddings();
const redis = new Redis(REDIS_URL);
let db: PGlite;
let pgServer: PGLiteSocketServer;
let p: TestPlatform;

const EMAILS = [
  { id: 'm1', text: 'Interview with Acme Corp scheduled for Friday May 2 2025 at 10:00 with Grace Hopper.' },
  { id: 'm2', text: 'Your electricity invoice for April is attached, amount due 42 EUR.' },
];

beforeAll(async () => {
  await Promise.all([telegram.start(), openai.start(), embed.start()]);
  db = await PGlite.create({ extensions: { vector } });
  await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
  await db.exec(
    'CREATE TABLE emails_embeddings (id uuid NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY, text text, metadata jsonb, embedding vector)',
  );
  for (const email of EMAILS)
    await db.query('INSERT INTO emails_embeddings (text, metadata, embedding) VALUES ($1, $2, $3::vector)', [
      email.text,
      JSON.stringify({ emails_metadata: { id: email.id } }),
      `[${vectorOf(email.text).join(',')}]`,
    ]);
  pgServer = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 20 });
  await pgServer.start();
  const [pgHost = '', pgPort = ''] = pgServer.getServerConn().split(':');

  p = await workflowPlatform('sqlite', { PUBLIC_URL });
  await p.ctx.apis.workflows?.startWorker();
  const redisUrl = new URL(REDIS_URL);
  // Named by the exports' credential ids: a node's reference finds a credential by id or by name.
  for (const id of ['ODwnm0QOyG3qSae4', 'XVBXGXSsaCjU2DOS'])
    await createCredential(p, id, 'telegramApi', { accessToken: FakeTelegram.TOKEN, baseUrl: telegram.base });
  for (const id of ['z2BDTzrWF8FQDfkv', '8gccIjcuf3gvaoEr'])
    await createCredential(p, id, 'openAiApi', { apiKey: 'sk-local', url: `${openai.base}/v1` });
  await createCredential(p, 'zvOcUsYouCZD11Wd', 'ollamaApi', { baseUrl: embed.base });
  await createCredential(p, 'uVE9VwtTkw6GKrWw', 'postgres', {
    host: pgHost,
    port: pgPort,
    database: 'postgres',
    user: 'postgres',
    password: 'unused',
  });
  await createCredential(p, 'zU4DA70qSDrZM1El', 'redis', {
    host: redisUrl.hostname,
    port: redisUrl.port || '6379',
  });
}, 300_000);

const chats: number[] = [];
afterAll(async () => {
  const keys = chats.flatMap((c) => [`handoff_${c}_state`, `handoff_${c}_chat`, `handoff_${c}_chat2`]);
  if (keys.length > 0) await redis.del(...keys);
  await p?.close();
  await Promise.all([telegram.stop(), openai.stop(), embed.stop(), redis.quit()]);
  await pgServer?.stop();
  await db?.close();
});
beforeEach(() => {
  openai.reset();
  embed.reset();
});

/** The export as the import body: its nodes, connections and settings as they are (3350 has no name). */
function templateBody(file: string) {
  const raw = JSON.parse(readFileSync(join(FIXTURES, 'templates', file), 'utf8')) as Record<string, unknown>;
  return {
    name: typeof raw.name === 'string' ? raw.name : file,
    nodes: raw.nodes,
    connections: raw.connections,
    settings: raw.settings ?? {},
  };
}

/** Imports and activates a template; the secret its Telegram Trigger registered. */
async function activeTemplate(file: string): Promise<{ id: string; path: string; secret: string }> {
  const body = templateBody(file);
  const id = await createWorkflow(p, body);
  const before = telegram.called('setWebhook').length;
  await activate(p, id);
  const set = telegram.called('setWebhook').slice(before);
  expect(set).toHaveLength(1);
  const url = String(set[0]?.body.url);
  expect(url.startsWith(`${PUBLIC_URL}/webhook/`)).toBe(true);
  return { id, path: url.slice(PUBLIC_URL.length), secret: String(set[0]?.body.secret_token) };
}

const message = (chat: number, text: string, extra: Record<string, unknown> = {}) => ({
  update_id: chat,
  message: {
    message_id: 31,
    from: { id: chat, is_bot: false, first_name: 'Ada', username: 'ada' },
    chat: { id: chat, type: 'private' },
    date: 1_746_000_000,
    text,
    ...extra,
  },
});

async function deliver(hook: { path: string; secret: string }, update: unknown) {
  return p.request({
    method: 'POST',
    url: hook.path,
    key: null,
    payload: update as object,
    headers: { 'x-telegram-bot-api-secret-token': hook.secret },
  });
}

type Execution = {
  status: string;
  data: {
    resultData: {
      error?: { message: string };
      runData: Record<string, Array<{ data: { main: Array<Array<{ json: Record<string, unknown> }>> } }>>;
    };
  };
};
const outputOf = (e: Execution, node: string) =>
  (e.data.resultData.runData[node]?.[0]?.data.main[0] ?? []).map((i) => i.json);

describe('e-mail chatbot on Telegram and PGVector (template LPQsiqt476n7ne7f)', () => {
  it('an update from the allowed chat runs the agent with the vector tool; the answer goes back escaped, as a reply', async () => {
    const hook = await activeTemplate('telegram-agent-pgvector-ollama.json');
    expect(telegram.called('setWebhook').at(-1)?.body.allowed_updates).toEqual(['message']);
    openai.queue(
      toolCalls([
        { id: 'c1', name: 'emails_vector_search', arguments: '{"input":"interview scheduled Friday"}' },
      ]),
      completion('You have an interview with Acme Corp on Friday (May 2), 10:00.'),
    );
    const sentBefore = telegram.called('sendMessage').length;
    // A reply (n8n renders `{{ null }}` in text as "null", the platform as '': a reply avoids that case).
    const res = await deliver(
      hook,
      message(6865163996, 'Any interview scheduled this Friday?', { reply_to_message: { message_id: 30 } }),
    );
    expect(res.statusCode).toBe(200);
    const e = (await settled(p, (res.json() as { executionId: string }).executionId)) as unknown as Execution;
    expect(e.data.resultData.error?.message).toBeUndefined();
    expect(e.status).toBe('success');

    // The query embedded by Ollama's wire with the template's model, and the nearest e-mail given to the model.
    expect(embed.requests[0]?.path).toBe('/api/embed');
    expect(embed.requests[0]?.body.model).toBe('nomic-embed-text:latest');
    expect(openai.requests[0]?.model).toBe('mistral-small3.1:latest');
    const toolAnswer = (
      openai.requests[1]?.messages as Array<{ role: string; content: string }> | undefined
    )?.at(-1);
    expect(toolAnswer?.role).toBe('tool');
    expect(toolAnswer?.content).toContain('Interview with Acme Corp');
    expect(outputOf(e, 'Generate session id')).toEqual([
      { chatInput: 'Any interview scheduled this Friday?', reply_to: 30, message_id: 31 },
    ]);

    const sent = telegram.called('sendMessage').slice(sentBefore);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.body).toEqual({
      chat_id: 6865163996,
      text: 'You have an interview with Acme Corp on Friday \\(May 2\\), 10:00\\.',
      parse_mode: 'MarkdownV2',
      reply_to_message_id: 31,
      disable_notification: true,
      disable_web_page_preview: true,
    });
  });

  it("another chat's update starts nothing (the trigger's chatIds), and no secret is refused", async () => {
    const hook = await activeTemplate('telegram-agent-pgvector-ollama.json').catch(() => null);
    // Its webhook id is taken by the first test's workflow: the same export is active once.
    expect(hook).toBeNull();
    const [first] = telegram.called('setWebhook');
    const path = String(first?.body.url).slice(PUBLIC_URL.length);
    const other = await deliver({ path, secret: String(first?.body.secret_token) }, message(1234, 'hello'));
    expect(other.statusCode).toBe(200);
    expect(other.json()).toEqual({});
    const stranger = await p.request({
      method: 'POST',
      url: path,
      key: null,
      payload: message(6865163996, 'x'),
    });
    expect(stranger.statusCode).toBe(403);
    expect(openai.requests).toEqual([]);
  });
});

describe('human handoff with Redis memories and the Chat Memory Manager (template 3350)', () => {
  let hook: { id: string; path: string; secret: string };
  beforeAll(async () => {
    hook = await activeTemplate('telegram-handoff-redis-memory-manager.json');
  });

  const extracted = (fields: Record<string, string>) => completion(JSON.stringify(fields));

  it('onboarding: the agent answers from its Redis memory; details missing, the conversation goes on', async () => {
    const chat = 700_000 + Math.floor(Math.random() * 99_999);
    chats.push(chat);
    openai.queue(
      completion('Thanks! What is your address and postcode?'),
      // Every attribute is required: the model leaves the unknown ones blank, as the prompt says.
      extracted({ firstname: 'Ada', lastname: 'Lovelace', address_and_postcode: '', reason_for_call: '' }),
    );
    const sentBefore = telegram.called('sendMessage').length;
    const res = await deliver(hook, message(chat, 'Hi, I am Ada Lovelace and I want a refund'));
    const e = (await settled(p, (res.json() as { executionId: string }).executionId)) as unknown as Execution;
    expect(e.data.resultData.error?.message).toBeUndefined();
    // No state yet: the Switch's fallback (Onboarding).
    expect(outputOf(e, 'Onboarding Agent')).toEqual([
      { output: 'Thanks! What is your address and postcode?' },
    ]);
    const stored = (await redis.lrange(`handoff_${chat}_chat`, 0, -1)).map((s) => JSON.parse(s));
    expect(stored.map((m) => [m.type, m.data.content])).toEqual([
      ['ai', 'Thanks! What is your address and postcode?'],
      ['human', 'Hi, I am Ada Lovelace and I want a refund'],
    ]);
    // The extractor read the history the Redis node got (`parseJson()` of each stored message).
    const extractorPrompt = (openai.requests[1]?.messages as Array<{ content: string }> | undefined)?.at(
      -1,
    )?.content;
    expect(extractorPrompt).toContain('human: Hi, I am Ada Lovelace and I want a refund');
    expect(outputOf(e, 'Has All Criteria?')).toEqual([]);
    const sent = telegram.called('sendMessage').slice(sentBefore);
    expect(sent.map((s) => s.body)).toEqual([
      {
        chat_id: chat,
        text: 'Thanks! What is your address and postcode?',
        parse_mode: 'Markdown',
        disable_web_page_preview: true,
      },
    ]);
  });

  it('details complete: handoff starts, and the Chat Memory Manager writes the details into the after-sales memory', async () => {
    const chat = 800_000 + Math.floor(Math.random() * 99_999);
    chats.push(chat);
    openai.queue(
      completion('Thank you, I am handing you over now.'),
      extracted({
        firstname: 'Ada',
        lastname: 'Lovelace',
        address_and_postcode: '12 St James Square, SW1Y 4JH',
        reason_for_call: 'refund for a broken engine',
      }),
    );
    const res = await deliver(hook, message(chat, 'My address is 12 St James Square, SW1Y 4JH'));
    const e = (await settled(p, (res.json() as { executionId: string }).executionId)) as unknown as Execution;
    expect(e.data.resultData.error?.message).toBeUndefined();
    expect(outputOf(e, 'Update Agent Memory1')).toEqual([{ success: true }]);
    const memory = (await redis.lrange(`handoff_${chat}_chat2`, 0, -1)).map((s) => JSON.parse(s));
    expect(memory).toEqual([
      {
        type: 'ai',
        data: {
          // The template's own text (its `lastname` line reads the first name).
          content:
            "The person I'm speaking to has the following details:\nfirstname: Ada\nlastname: Ada\nreason for call: refund for a broken engine",
          additional_kwargs: { hideFromUI: true },
          response_metadata: {},
          tool_calls: [],
          invalid_tool_calls: [],
        },
      },
    ]);
    const sent = await until(
      () =>
        telegram
          .called('sendMessage')
          .find((s) => s.body.chat_id === chat && String(s.body.text).startsWith('Thank you. I')),
      'the handoff notice',
    );
    expect(sent.body.text).toContain("I've now transferred you to a human agent");
  });

  it('state "bot": the after-sales agent reads the memory the manager wrote; state "human": the canned answer', async () => {
    const chat = 900_000 + Math.floor(Math.random() * 99_999);
    chats.push(chat);
    await redis.set(`handoff_${chat}_state`, 'bot');
    await redis.lpush(
      `handoff_${chat}_chat2`,
      JSON.stringify({
        type: 'ai',
        data: { content: 'Customer: Ada, refund request.', additional_kwargs: { hideFromUI: true } },
      }),
    );
    openai.queue(completion('Your refund is on its way.'));
    const res = await deliver(hook, message(chat, 'Where is my refund?'));
    const e = (await settled(p, (res.json() as { executionId: string }).executionId)) as unknown as Execution;
    expect(e.data.resultData.error?.message).toBeUndefined();
    const messages = openai.requests[0]?.messages as Array<{ role: string; content: string }>;
    expect(messages.map((m) => m.role)).toEqual(['system', 'assistant', 'user']);
    expect(messages[1]?.content).toBe('Customer: Ada, refund request.');
    expect(telegram.called('sendMessage').at(-1)?.body).toMatchObject({
      chat_id: chat,
      text: 'Your refund is on its way.',
    });

    await redis.set(`handoff_${chat}_state`, 'human');
    const human = await deliver(hook, message(chat, 'Hello?'));
    const canned = (await settled(
      p,
      (human.json() as { executionId: string }).executionId,
    )) as unknown as Execution;
    expect(canned.status).toBe('success');
    expect(String(telegram.called('sendMessage').at(-1)?.body.text)).toMatch(
      /^This conversation has been handed-off/,
    );
    expect(openai.requests).toHaveLength(1);
  });

  it('deactivating the template withdraws its webhook from Telegram', async () => {
    const before = telegram.called('deleteWebhook').length;
    const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${hook.id}/deactivate` });
    expect(res.statusCode).toBe(200);
    expect(telegram.called('deleteWebhook')).toHaveLength(before + 1);
  });
});
