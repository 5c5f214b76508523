/**
 * Issue 35, item 7: messages with files. A PDF part (OpenAI chat `file`, Responses `input_file`) reaches
 * a model whose registry entry lists the `file` input, in its upstream's dialect: an OpenAI `file` part
 * with the data URL, an Anthropic `document` block. A model without `file` refuses it with a 400 naming
 * the model, the part and what the model reads; Ollama entries cannot list `file` at all. Wrong types,
 * oversized and too many files are refused; the transcript keeps a note, not the bytes. The agent API
 * (foreground and background) and the Responses API through the official openai client, on both databases.
 */
import OpenAI from 'openai';
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

const PDF_BYTES = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const PDF = PDF_BYTES.toString('base64');
const PDF_URL = `data:application/pdf;base64,${PDF}`;
const NOTE = `[file: report.pdf, application/pdf, ${PDF_BYTES.length} bytes]`;
const ANTHROPIC_KEY = 'sk-ant-files-test';

const lastUser = (messages: Array<Record<string, unknown>>) =>
  messages.filter((m) => m.role === 'user').at(-1);
const filePart = (data = PDF_URL, filename = 'report.pdf') => ({
  type: 'file',
  file: { filename, file_data: data },
});

describe.each(await testDialects())('agents: files in messages on %s', (dialect) => {
  let bed: LlmTestbed;
  let anthropic: FakeLlmServer;
  beforeAll(async () => {
    anthropic = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
    bed = await startLlmTestbed(
      dialect,
      { ANTHROPIC_TEST_KEY: ANTHROPIC_KEY },
      {
        timeoutMs: 20_000,
        extraModels: (ollama, openai) => [
          {
            provider: 'openai',
            baseUrl: openai.url,
            name: 'docs-openai',
            upstreamModel: 'gpt-4o-mini',
            inputs: ['text', 'image', 'file'],
          },
          {
            provider: 'openai',
            baseUrl: openai.url,
            name: 'vision-only',
            upstreamModel: 'gpt-4o-mini',
            inputs: ['text', 'image'],
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
            name: 'docs-claude',
            upstreamModel: 'claude-sonnet-4-5',
            apiKeyEnv: 'ANTHROPIC_TEST_KEY',
            inputs: ['text', 'file'],
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

  it('passes a PDF to an OpenAI upstream as a file part; the transcript and later turns keep a note', async () => {
    const agent = await createAgent(bed, { model: 'docs-openai' });
    const res = await send(agent.id, {
      content: [{ type: 'text', text: 'Summarise the report' }, filePart()],
    });
    expect(res.status, res.text).toBe(200);
    const turn = res.json() as { conversationId: string; messages: Message[] };
    expect(lastUser(chatCalls(bed.openai)[0]?.messages ?? [])?.content).toEqual([
      { type: 'text', text: 'Summarise the report' },
      { type: 'file', file: { filename: 'report.pdf', file_data: PDF_URL } },
    ]);
    expect(turn.messages[0]?.content).toBe(`Summarise the report\n${NOTE}`);

    const next = await send(agent.id, { content: 'And the total?', conversationId: turn.conversationId });
    expect(next.status, next.text).toBe(200);
    const history = chatCalls(bed.openai)[1]?.messages ?? [];
    expect(JSON.stringify(history)).not.toContain(PDF);
    expect(history.map((m) => textOf(m.content)).join('\n')).toContain(NOTE);
    const stored = await transcript(turn.conversationId);
    expect(JSON.stringify(stored)).not.toContain(PDF);
    // The ended runs keep no bytes either (a run holds them only while it may resume).
    const runs = await bed.p.ctx.db
      .selectFrom('agent_runs')
      .select(['status', 'options'])
      .where('conversation_id', '=', turn.conversationId)
      .execute();
    expect(runs.map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(JSON.stringify(runs)).not.toContain(PDF);
  });

  it('passes a PDF to an Anthropic upstream as a base64 document block, before the text', async () => {
    const agent = await createAgent(bed, { model: 'docs-claude' });
    const res = await send(agent.id, {
      content: [
        { type: 'input_text', text: 'What does it say?' },
        { type: 'input_file', filename: 'report.pdf', file_data: PDF_URL },
      ],
    });
    expect(res.status, res.text).toBe(200);
    const body = anthropic.requests.find((r) => r.path === '/v1/messages')?.body as {
      messages: Array<{ role: string; content: unknown }>;
    };
    expect(lastUser(body.messages)?.content).toEqual([
      {
        type: 'document',
        source: { type: 'base64', media_type: 'application/pdf', data: PDF },
        title: 'report.pdf',
      },
      { type: 'text', text: 'What does it say?' },
    ]);
  });

  it('a background run keeps its PDF until a worker sends it', async () => {
    const agent = await createAgent(bed, { model: 'docs-openai' });
    const res = await send(agent.id, { content: [filePart()], background: true });
    expect(res.status, res.text).toBe(202);
    const run = res.json() as { id: string; conversationId: string };
    let status = 'queued';
    for (let i = 0; i < 400 && status !== 'completed' && status !== 'failed'; i++) {
      const polled = await call(bed, 'GET', `/api/agents/${agent.id}/runs/${run.id}`);
      status = (polled.json() as { status: string }).status;
      if (status !== 'completed') await new Promise((r) => setImmediate(r));
    }
    expect(status).toBe('completed');
    const sent = lastUser(chatCalls(bed.openai)[0]?.messages ?? [])?.content as unknown[];
    expect(sent).toContainEqual({ type: 'file', file: { filename: 'report.pdf', file_data: PDF_URL } });
    expect((await transcript(run.conversationId))[0]?.content).toBe(NOTE);
    const row = await bed.p.ctx.db
      .selectFrom('agent_runs')
      .select('options')
      .where('id', '=', run.id)
      .executeTakeFirst();
    expect(row?.options).not.toContain(PDF);
  });

  it('refuses a PDF for a model without the file input, naming the model, the part and what it reads', async () => {
    const before = await call(bed, 'GET', '/api/conversations?limit=100');
    const count = (before.json() as { data: unknown[] }).data.length;
    for (const [model, reads] of [
      ['gpt-4o-mini', 'takes text only'],
      ['vision-only', 'takes text and image'],
      // Ollama's chat carries no documents: its entries cannot list `file`.
      ['vision-ollama', 'takes text and image'],
    ] as const) {
      const agent = await createAgent(bed, { model });
      const res = await send(agent.id, { content: [{ type: 'text', text: 'Read' }, filePart()] });
      const body = expectError(res, 400, 'VALIDATION_ERROR');
      expect(body.message).toBe(`Model '${model}' does not accept files`);
      const details = JSON.stringify(body.details);
      expect(details).toContain('content[1]');
      expect(details).toContain('a file part (application/pdf)');
      expect(details).toContain(reads);
    }
    expect(chatCalls(bed.openai)).toHaveLength(0);
    expect(chatCalls(bed.ollama)).toHaveLength(0);
    const after = await call(bed, 'GET', '/api/conversations?limit=100');
    expect((after.json() as { data: unknown[] }).data).toHaveLength(count);
  });

  it('refuses wrong media types, URLs, bad base64, oversized and too many files', async () => {
    const agent = await createAgent(bed, { model: 'docs-openai' });
    const zip = await send(agent.id, {
      content: [filePart('data:application/zip;base64,UEsDBA==', 'a.zip')],
    });
    expectNamesField(zip, 'content[0]');
    expect(zip.text).toContain('application/zip');
    expect(zip.text).toContain('PDF (application/pdf)');
    const url = await send(agent.id, { content: [filePart('https://example.com/report.pdf')] });
    expectNamesField(url, 'content[0]');
    expect(url.text).toContain('does not fetch');
    expectNamesField(
      await send(agent.id, { content: [filePart('data:application/pdf;base64,not base64!')] }),
      'content[0]',
    );
    const idOnly = await send(agent.id, { content: [{ type: 'input_file', file_id: 'file-abc' }] });
    // File ids (OpenAI's Files API) are not read: the part needs its data.
    expectNamesField(idOnly, 'content.0.file_data');
    // 5 MiB decoded is the most one part may carry.
    const big = Buffer.alloc(5 * 1024 * 1024 + 3).toString('base64');
    const oversized = await send(agent.id, { content: [filePart(`data:application/pdf;base64,${big}`)] });
    expectNamesField(oversized, 'content[0]');
    expect(oversized.text).toContain('at most 5242880');
    const many = await send(agent.id, { content: Array.from({ length: 11 }, () => filePart()) });
    expectNamesField(many, 'content[10]');
    expect(many.text).toContain('at most 10');
    expect(chatCalls(bed.openai)).toHaveLength(0);
  });

  it('the Responses API carries input_file from the official client; previous_response_id reads the note', async () => {
    const client = new OpenAI({ baseURL: `${bed.url}/v1`, apiKey: bed.p.adminKey, maxRetries: 0 });
    const first = await client.responses.create({
      model: 'docs-openai',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Summarise' },
            { type: 'input_file', filename: 'report.pdf', file_data: PDF_URL },
          ],
        },
      ],
    });
    expect(first.status).toBe('completed');
    expect(lastUser(chatCalls(bed.openai)[0]?.messages ?? [])?.content).toEqual([
      { type: 'text', text: 'Summarise' },
      { type: 'file', file: { filename: 'report.pdf', file_data: PDF_URL } },
    ]);
    await client.responses.create({ model: 'docs-openai', input: 'More', previous_response_id: first.id });
    const history = chatCalls(bed.openai)[1]?.messages ?? [];
    expect(JSON.stringify(history)).not.toContain(PDF);
    expect(history.map((m) => textOf(m.content)).join('\n')).toContain(NOTE);

    const refused = await client.responses
      .create({
        model: 'vision-only',
        input: [
          { role: 'user', content: [{ type: 'input_file', filename: 'report.pdf', file_data: PDF_URL }] },
        ],
      })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    const message = (refused as InstanceType<typeof OpenAI.BadRequestError>).message;
    expect(message).toContain("'vision-only'");
    expect(message).toContain('input[0].content[0] is an input_file part');
    expect(chatCalls(bed.openai)).toHaveLength(2);
  });
});
