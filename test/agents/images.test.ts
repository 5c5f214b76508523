/**
 * Issue 35: messages with images and files. Content parts as OpenAI's APIs carry them and Ollama's
 * `images` reach a model whose registry entry takes images, translated for its upstream (OpenAI
 * `image_url` parts, Ollama `images`); a text-only model refuses them with a 400 naming the model and
 * the part; URLs, bad base64, other file types and oversized parts are refused; the transcript keeps
 * a note of each image, not its bytes. The agent API and the Responses API, on both databases.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { startFakeAnthropic } from '../support/fake-llm/anthropic-server.js';
import type { FakeLlmServer } from '../support/fake-llm/index.js';
import {
  call,
  chatCalls,
  createAgent,
  expectError,
  expectNamesField,
  type Message,
  textOf,
} from './support.js';

/** A 1×1 PNG (70 bytes). */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const PNG_URL = `data:image/png;base64,${PNG}`;
const PNG_NOTE = '[image: image/png, 70 bytes]';
const ANTHROPIC_KEY = 'sk-ant-images-test';

type Part = Record<string, unknown>;
const lastUser = (messages: Array<Record<string, unknown>>) =>
  messages.filter((m) => m.role === 'user').at(-1);

describe.each(await testDialects())('agents: images and files in messages on %s', (dialect) => {
  let bed: LlmTestbed;
  let anthropic: FakeLlmServer;
  beforeAll(async () => {
    anthropic = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
    bed = await startLlmTestbed(
      dialect,
      { ANTHROPIC_TEST_KEY: ANTHROPIC_KEY },
      {
        extraModels: (ollama, openai) => [
          {
            provider: 'openai',
            baseUrl: openai.url,
            name: 'vision-openai',
            upstreamModel: 'gpt-4o-mini',
            inputs: ['text', 'image'],
          },
          {
            provider: 'openai',
            baseUrl: openai.url,
            name: 'vision-then-text',
            upstreamModel: 'gpt-4o-mini',
            inputs: ['text', 'image'],
            fallbacks: ['llama3.2'],
          },
          {
            provider: 'ollama',
            baseUrl: ollama.url,
            name: 'vision-ollama',
            upstreamModel: 'llama3.2',
            inputs: ['text', 'image'],
          },
          {
            provider: 'anthropic',
            baseUrl: anthropic.url,
            name: 'vision-claude',
            upstreamModel: 'claude-sonnet-4-5',
            apiKeyEnv: 'ANTHROPIC_TEST_KEY',
            inputs: ['text', 'image'],
          },
        ],
      },
    );
  });
  afterAll(async () => {
    await bed?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    bed.openai.reset();
    bed.ollama.reset();
    anthropic.reset();
  });

  const send = (agentId: string, body: Record<string, unknown>) =>
    call(bed, 'POST', `/api/agents/${agentId}/messages`, { body });
  const transcript = async (conversationId: string): Promise<Message[]> => {
    const res = await call(bed, 'GET', `/api/conversations/${conversationId}`);
    expect(res.status, res.text).toBe(200);
    return (res.json() as { messages: { data: Message[] } }).messages.data;
  };

  it('never falls back to a model that does not read images: the image is not sent to it', async () => {
    const agent = await createAgent(bed, { model: 'vision-then-text' });
    bed.openai.failNext(503);
    const res = await send(agent.id, {
      content: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image_url', image_url: { url: PNG_URL } },
      ],
    });
    expect(res.status, res.text).toBeGreaterThanOrEqual(500);
    expect(chatCalls(bed.ollama)).toHaveLength(0);
    // Text alone may fall back as before.
    bed.openai.failNext(503);
    const plain = await send(agent.id, { content: 'Hello?' });
    expect(plain.status, plain.text).toBe(200);
    expect(chatCalls(bed.ollama)).toHaveLength(1);
  });

  it('passes OpenAI image parts to an OpenAI upstream as image_url parts; the transcript keeps a note', async () => {
    const agent = await createAgent(bed, { model: 'vision-openai' });
    const res = await send(agent.id, {
      content: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image_url', image_url: { url: PNG_URL } },
      ],
    });
    expect(res.status, res.text).toBe(200);
    const turn = res.json() as { conversationId: string; messages: Message[] };
    const sent = lastUser(chatCalls(bed.openai)[0]?.messages ?? []);
    expect(sent?.content).toEqual([
      { type: 'text', text: 'What is in this picture?' },
      { type: 'image_url', image_url: { url: PNG_URL } },
    ]);
    expect(turn.messages[0]?.content).toBe(`What is in this picture?\n${PNG_NOTE}`);

    // The next turn reads the note in its history, not the image again.
    const next = await send(agent.id, { content: 'And now?', conversationId: turn.conversationId });
    expect(next.status, next.text).toBe(200);
    const history = chatCalls(bed.openai)[1]?.messages ?? [];
    expect(JSON.stringify(history)).not.toContain(PNG);
    expect(history.map((m) => textOf(m.content)).join('\n')).toContain(PNG_NOTE);
  });

  it('passes Ollama images and Responses-style input_image parts to an Ollama upstream as images', async () => {
    const agent = await createAgent(bed, { model: 'vision-ollama' });
    const res = await send(agent.id, { content: 'Describe it', images: [PNG] });
    expect(res.status, res.text).toBe(200);
    const first = lastUser(chatCalls(bed.ollama)[0]?.messages ?? []);
    expect(first).toMatchObject({ content: 'Describe it', images: [PNG] });

    const parts = await send(agent.id, {
      content: [
        { type: 'input_text', text: 'Two of them' },
        { type: 'input_image', image_url: PNG_URL },
        { type: 'input_image', image_url: PNG_URL },
      ],
    });
    expect(parts.status, parts.text).toBe(200);
    expect(lastUser(chatCalls(bed.ollama)[1]?.messages ?? [])).toMatchObject({
      content: 'Two of them',
      images: [PNG, PNG],
    });
    const stored = await transcript((parts.json() as { conversationId: string }).conversationId);
    expect(stored[0]?.content).toBe(`Two of them\n${PNG_NOTE}\n${PNG_NOTE}`);
  });

  it('passes image parts to an Anthropic upstream as base64 image blocks', async () => {
    const agent = await createAgent(bed, { model: 'vision-claude' });
    const res = await send(agent.id, {
      content: [
        { type: 'input_text', text: 'What colour?' },
        { type: 'image_url', image_url: { url: PNG_URL } },
      ],
    });
    expect(res.status, res.text).toBe(200);
    const body = anthropic.requests.find((r) => r.path === '/v1/messages')?.body as {
      messages: Array<{ role: string; content: unknown }>;
    };
    // Images before the text, as Anthropic advises.
    expect(lastUser(body.messages)?.content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      { type: 'text', text: 'What colour?' },
    ]);
  });

  it('reads a text file part into the message; refuses other file types', async () => {
    const agent = await createAgent(bed, { model: 'gpt-4o-mini' });
    const csv = Buffer.from('name,qty\npear,3\n').toString('base64');
    const res = await send(agent.id, {
      content: [
        { type: 'text', text: 'Sum the quantities' },
        { type: 'file', file: { filename: 'stock.csv', file_data: `data:text/csv;base64,${csv}` } },
      ],
    });
    expect(res.status, res.text).toBe(200);
    const sent = textOf(lastUser(chatCalls(bed.openai)[0]?.messages ?? [])?.content);
    expect(sent).toContain('Sum the quantities');
    expect(sent).toContain('--- stock.csv (text/csv) ---\nname,qty\npear,3');

    // PDFs go to models that list the file input (files.test.ts); other binary types to none.
    const zip = await send(agent.id, {
      content: [{ type: 'input_file', filename: 'a.zip', file_data: 'data:application/zip;base64,UEsDBA==' }],
    });
    expectNamesField(zip, 'content[0]');
    expect(zip.text).toContain('application/zip');

    // A text file may not carry the message past its text bound (the transcript keeps it, turns resend it).
    const big = Buffer.from('x'.repeat(100_001)).toString('base64');
    const tooLong = await send(agent.id, {
      content: [{ type: 'file', file: { filename: 'big.txt', file_data: `data:text/plain;base64,${big}` } }],
    });
    expectNamesField(tooLong, 'content');
    expect(tooLong.text).toContain('100000');
  });

  it('refuses images for a text-only model with a 400 naming the model and the part; nothing is stored', async () => {
    const agent = await createAgent(bed, { model: 'gpt-4o-mini' });
    const before = await call(bed, 'GET', '/api/conversations?limit=100');
    const count = (before.json() as { data: unknown[] }).data.length;
    const res = await send(agent.id, {
      content: [
        { type: 'text', text: 'Look' },
        { type: 'image_url', image_url: { url: PNG_URL } },
      ],
    });
    const body = expectError(res, 400, 'VALIDATION_ERROR');
    expect(body.message).toContain("'gpt-4o-mini'");
    expect(JSON.stringify(body.details)).toContain('content[1].image_url');
    expect(JSON.stringify(body.details)).toContain('image_url part');
    expectNamesField(await send(agent.id, { content: 'Look', images: [PNG] }), 'images[0]');
    expect(chatCalls(bed.openai)).toHaveLength(0);
    const after = await call(bed, 'GET', '/api/conversations?limit=100');
    expect((after.json() as { data: unknown[] }).data).toHaveLength(count);
  });

  it('refuses URLs, bad base64, non-images, too many and oversized images, and an empty message', async () => {
    const agent = await createAgent(bed, { model: 'vision-openai' });
    const image = (url: string): Part => ({ type: 'image_url', image_url: { url } });
    const url = await send(agent.id, { content: [image('https://example.com/cat.png')] });
    expectNamesField(url, 'content[0].image_url');
    expect(url.text).toContain('does not fetch');
    expectNamesField(
      await send(agent.id, { content: [image('data:image/png;base64,not base64!')] }),
      'content[0].image_url',
    );
    expectNamesField(
      await send(agent.id, { content: [image('data:image/svg+xml;base64,PHN2Zz4=')] }),
      'content[0].image_url',
    );
    expectNamesField(await send(agent.id, { content: 'x', images: ['AAAA'] }), 'images[0]');
    expectNamesField(await send(agent.id, { content: 'x', images: Array(11).fill(PNG) }), 'images');
    // 5 MiB decoded is the most a part may carry.
    const big = Buffer.alloc(5 * 1024 * 1024 + 3);
    big.set(Buffer.from(PNG, 'base64'));
    const oversized = await send(agent.id, {
      content: [image(`data:image/png;base64,${big.toString('base64')}`)],
    });
    expectNamesField(oversized, 'content[0].image_url');
    expect(oversized.text).toContain('at most 5242880');
    expectNamesField(await send(agent.id, { content: [{ type: 'text', text: '' }] }), 'content');
    expectNamesField(await send(agent.id, { content: [{ type: 'audio', data: 'x' }] }), 'content');
    expect(chatCalls(bed.openai)).toHaveLength(0);
  });

  it('the Responses API passes input_image to the model, stores notes for previous_response_id, refuses text-only models', async () => {
    const input = [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is this?' },
          { type: 'input_image', image_url: PNG_URL },
        ],
      },
    ];
    const first = await call(bed, 'POST', '/v1/responses', { body: { model: 'vision-openai', input } });
    expect(first.status, first.text).toBe(200);
    expect(lastUser(chatCalls(bed.openai)[0]?.messages ?? [])?.content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: PNG_URL } },
    ]);
    const second = await call(bed, 'POST', '/v1/responses', {
      body: {
        model: 'vision-openai',
        input: 'And?',
        previous_response_id: (first.json() as { id: string }).id,
      },
    });
    expect(second.status, second.text).toBe(200);
    const history = chatCalls(bed.openai)[1]?.messages ?? [];
    expect(JSON.stringify(history)).not.toContain(PNG);
    expect(history.map((m) => textOf(m.content)).join('\n')).toContain(PNG_NOTE);

    const refused = await call(bed, 'POST', '/v1/responses', { body: { model: 'gpt-4o-mini', input } });
    // The OpenAI surface answers in OpenAI's error shape.
    expect(refused.status, refused.text).toBe(400);
    const error = (refused.json() as { error: { type: string; message: string } }).error;
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toContain("'gpt-4o-mini'");
    expect(error.message).toContain('input[0].content[1].image_url is an input_image part');
    expect(chatCalls(bed.openai)).toHaveLength(2);
  });
});
