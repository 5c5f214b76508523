import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import type { EngineDeps, Item } from '../../src/modules/workflows/engine/types.js';
import { FakeProvider, type ProviderReply } from './support/fake-provider.js';
import { loadFixture, runFixture } from './support/n8n-fixtures.js';

/**
 * n8n's OpenAI app node (`@n8n/n8n-nodes-langchain.openAi` v1–1.8): real template exports
 * (test/fixtures/n8n/templates/, SOURCES-templates.md) imported unmodified and run against a local
 * server speaking OpenAI's wire formats — JSON chat completions, multipart transcriptions, speech bytes.
 */

const chat = (content: string | null, toolCalls?: unknown[]): ProviderReply => ({
  body: {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o-mini',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content,
          refusal: null,
          ...(toolCalls ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: toolCalls ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
  },
});

const api = new FakeProvider();
let deps: Partial<EngineDeps>;

beforeAll(async () => {
  await api.start();
  deps = {
    http: createOutboundHttp({ allowHosts: [new URL(api.base).host], timeoutMs: 10_000 }),
    tenant: 'acct_templates_openai',
    // Every template's openAiApi credential points at the local server.
    credential: async () => ({ apiKey: 'sk-test', url: `${api.base}/v1` }),
  };
});
afterAll(() => api.stop());
beforeEach(() => api.reset());

const runData = (outcome: Awaited<ReturnType<typeof runFixture>>['outcome'], node: string): Item[] =>
  outcome.state.runData[node]?.at(-1)?.output[0] ?? [];

describe('n8n templates with the OpenAI node', () => {
  it('Text → Message a Model with JSON output, routed by a Switch (Apple Shortcuts template, v1.4)', async () => {
    api.queue(chat('{"output":"Hola\\nmundo"}'));
    const { outcome, outputs } = await runFixture(
      loadFixture('templates/openai-text-shortcuts-switch.json'),
      deps,
      [{ json: { body: { type: 'spanish', content: 'Hello world' } } }],
    );
    expect(outcome.state.error).toBeNull();
    expect(api.requests).toHaveLength(1);
    const sent = api.requests[0]!;
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.body).toEqual({
      model: 'gpt-4o-mini',
      response_format: { type: 'json_object' },
      messages: [
        { role: 'system', content: 'You are a helpful assistant designed to output JSON.' },
        {
          role: 'system',
          content: 'Translate this message to Spanish.\nOutput a JSON with a single field: output',
        },
        { role: 'user', content: 'Hello world' },
      ],
    });
    // Simplified: the choice, its content parsed as JSON (what the Respond node's expression reads).
    expect(outputs['OpenAI - To Spanish']).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: { output: 'Hola\nmundo' }, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ]);
    expect(outputs['Respond to Shortcut']).toHaveLength(1);
  });

  it('Image → Analyze Image from the webhook’s binary upload (TradingView template, v1.7)', async () => {
    api.queue(chat('The chart trends up.'));
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const { outcome, outputs } = await runFixture(
      loadFixture('templates/openai-image-analyze-webhook.json'),
      deps,
      [
        {
          json: { body: {} },
          binary: { data: { data: png.toString('base64'), mimeType: 'image/png', fileName: 'c.png' } },
        },
      ],
    );
    expect(outcome.state.error).toBeNull();
    const sent = api.requests[0]!.body as {
      model: string;
      max_completion_tokens: number;
      messages: Array<{ content: Array<Record<string, unknown>> }>;
    };
    expect(sent.model).toBe('gpt-4o-mini');
    expect(sent.max_completion_tokens).toBe(300);
    const parts = sent.messages[0]!.content;
    expect(parts[0]).toMatchObject({ type: 'text' });
    expect(String(parts[0]!.text)).toContain('You are an expert financial analyst');
    expect(parts[1]).toEqual({
      type: 'image_url',
      image_url: { url: `data:image/png;base64,${png.toString('base64')}`, detail: 'auto' },
    });
    expect(outputs.OpenAI).toEqual([{ content: 'The chart trends up.' }]);
  });

  it('Audio → Generate Audio answered as the webhook’s binary (Text to Speech template, v1.3)', async () => {
    const mp3 = Buffer.from('ID3 fake mp3 bytes');
    api.queue({ contentType: 'audio/mpeg', body: mp3 });
    const { outcome } = await runFixture(loadFixture('templates/openai-audio-tts-webhook.json'), deps, [
      { json: { body: { text_to_convert: 'Good morning' } } },
    ]);
    expect(outcome.state.error).toBeNull();
    expect(api.requests[0]?.url).toBe('/v1/audio/speech');
    expect(api.requests[0]?.body).toEqual({
      model: 'tts-1',
      input: 'Good morning',
      voice: 'fable',
      response_format: 'mp3',
      speed: 1,
    });
    const [item] = runData(outcome, 'OpenAI');
    expect(Buffer.from(item?.binary?.data?.data ?? '', 'base64')).toEqual(mp3);
    expect(item?.binary?.data).toMatchObject({
      mimeType: 'audio/mp3',
      fileName: 'audio.mp3',
      fileExtension: 'mp3',
    });
    expect(item?.json).toMatchObject({ mimeType: 'audio/mp3', fileName: 'audio.mp3' });
  });
});

const manual = {
  id: 'm',
  name: 'Start',
  type: 'n8n-nodes-base.manualTrigger',
  typeVersion: 1,
  position: [0, 0],
  parameters: {},
};
const workflow = (
  openAi: Record<string, unknown>,
  extra: Record<string, unknown>[] = [],
  aiTools: string[] = [],
) => ({
  name: 'openai',
  nodes: [
    manual,
    {
      id: 'o',
      name: 'OpenAI',
      type: '@n8n/n8n-nodes-langchain.openAi',
      position: [200, 0],
      credentials: { openAiApi: { id: 'cred-1', name: 'OpenAI' } },
      ...openAi,
    },
    ...extra,
  ],
  connections: {
    Start: { main: [[{ node: 'OpenAI', type: 'main', index: 0 }]] },
    ...Object.fromEntries(
      aiTools.map((t) => [t, { ai_tool: [[{ node: 'OpenAI', type: 'ai_tool', index: 0 }]] }]),
    ),
  },
});

describe('the OpenAI node, operation by operation', () => {
  const calculator = {
    id: 'c',
    name: 'Calculator',
    type: '@n8n/n8n-nodes-langchain.toolCalculator',
    typeVersion: 1,
    position: [200, 200],
    parameters: {},
  };

  it('Message a Model calls a connected tool and sends its answer back (max_completion_tokens, top_p)', async () => {
    api.queue(
      chat(null, [
        { id: 'call_1', type: 'function', function: { name: 'calculator', arguments: '{"input":"6*7"}' } },
      ]),
      chat('It is 42.'),
    );
    const def = workflow(
      {
        typeVersion: 1.8,
        parameters: {
          modelId: { __rl: true, mode: 'id', value: 'gpt-4o' },
          messages: { values: [{ content: 'What is 6*7?' }] },
          options: { maxTokens: 50, topP: 0.5 },
        },
      },
      [calculator],
      ['Calculator'],
    );
    const { outcome, outputs } = await runFixture(def as never, deps);
    expect(outcome.state.error).toBeNull();
    expect(api.requests).toHaveLength(2);
    const first = api.requests[0]!.body;
    expect(first).toMatchObject({ model: 'gpt-4o', max_completion_tokens: 50, top_p: 0.5 });
    expect((first.tools as Array<{ function: { name: string } }>)[0]?.function.name).toBe('calculator');
    const second = api.requests[1]!.body.messages as Array<Record<string, unknown>>;
    expect(second.at(-1)).toEqual({ tool_call_id: 'call_1', role: 'tool', content: '42' });
    expect(outputs.OpenAI?.[0]).toMatchObject({ message: { content: 'It is 42.' } });
  });

  it('a model that calls tools past maxToolsIterations stops there and answers its last reply', async () => {
    const call = chat(null, [
      { id: 'c', type: 'function', function: { name: 'calculator', arguments: '{"input":"1+1"}' } },
    ]);
    api.queue(call, call, call);
    const def = workflow(
      {
        typeVersion: 1.8,
        parameters: {
          modelId: 'gpt-4o',
          messages: { values: [{ content: 'loop' }] },
          options: { maxToolsIterations: 2 },
        },
      },
      [calculator],
      ['Calculator'],
    );
    const { outcome, outputs } = await runFixture(def as never, deps);
    expect(outcome.state.error).toBeNull();
    expect(api.requests).toHaveLength(2);
    expect(outputs.OpenAI?.[0]).toMatchObject({ finish_reason: 'tool_calls' });
  });

  it('Transcribe a Recording sends the binary file as multipart to Whisper', async () => {
    api.queue({ body: { text: 'hello there' } });
    const def = workflow({
      typeVersion: 1.8,
      parameters: { resource: 'audio', operation: 'transcribe', options: { language: 'en' } },
    });
    const audio = Buffer.from('RIFF-wave-bytes');
    const { outcome, outputs } = await runFixture(def as never, deps, [
      {
        json: {},
        binary: { data: { data: audio.toString('base64'), mimeType: 'audio/wav', fileName: 'a.wav' } },
      },
    ]);
    expect(outcome.state.error).toBeNull();
    const sent = api.requests[0]!;
    expect(sent.url).toBe('/v1/audio/transcriptions');
    expect(sent.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const text = sent.raw.toString('latin1');
    expect(text).toContain('name="model"\r\n\r\nwhisper-1');
    expect(text).toContain('name="language"\r\n\r\nen');
    expect(text).toContain('name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF-wave-bytes');
    expect(outputs.OpenAI).toEqual([{ text: 'hello there' }]);
  });

  it('Generate an Image answers binary files from b64_json, or the URLs when asked', async () => {
    const png = Buffer.from('png-bytes');
    api.queue({
      body: { created: 1, data: [{ b64_json: png.toString('base64'), revised_prompt: 'a cat' }] },
    });
    const def = workflow({
      typeVersion: 1.8,
      parameters: { resource: 'image', prompt: 'a cat', options: { size: '1024x1024', dalleQuality: 'hd' } },
    });
    const { outcome } = await runFixture(def as never, deps);
    expect(outcome.state.error).toBeNull();
    expect(api.requests[0]?.url).toBe('/v1/images/generations');
    expect(api.requests[0]?.body).toEqual({
      prompt: 'a cat',
      model: 'dall-e-3',
      response_format: 'b64_json',
      quality: 'hd',
      size: '1024x1024',
    });
    const [item] = runData(outcome, 'OpenAI');
    expect(Buffer.from(item?.binary?.data?.data ?? '', 'base64')).toEqual(png);

    api.queue({ body: { created: 1, data: [{ url: 'https://img.example/1.png' }] } });
    const urls = await runFixture(
      workflow({
        typeVersion: 1.8,
        parameters: { resource: 'image', prompt: 'a dog', options: { returnImageUrls: true } },
      }) as never,
      deps,
    );
    expect(api.requests[1]?.body.response_format).toBe('url');
    expect(urls.outputs.OpenAI).toEqual([{ url: 'https://img.example/1.png' }]);
  });

  it('a refusal is the node’s error with OpenAI’s message', async () => {
    api.queue({
      status: 429,
      body: { error: { message: 'You exceeded your current quota', code: 'insufficient_quota' } },
    });
    const def = workflow({
      typeVersion: 1.8,
      parameters: { modelId: 'gpt-4o', messages: { values: [{ content: 'hi' }] } },
    });
    const { outcome } = await runFixture(def as never, deps);
    expect(outcome.state.error?.message).toBe(
      'OpenAI refused the request (429): You exceeded your current quota',
    );
  });

  it('the Assistants and Files resources are refused at save, naming what to use instead', async () => {
    const def = workflow({
      typeVersion: 1.8,
      parameters: {
        resource: 'assistant',
        assistantId: { __rl: true, mode: 'id', value: 'asst_1' },
        options: {},
      },
    });
    await expect(runFixture(def as never, deps)).rejects.toThrow(/Assistants API is not served here/);
    const file = workflow({
      typeVersion: 1.8,
      parameters: { resource: 'file', options: { purpose: 'assistants' } },
    });
    await expect(runFixture(file as never, deps)).rejects.toThrow(/Files API is not served here/);
    expect(api.requests).toHaveLength(0);
  });

  it('fails clearly without a credential, without a model, or on tool arguments that are not JSON', async () => {
    const noCredential = workflow({
      typeVersion: 1.8,
      parameters: { modelId: 'gpt-4o', messages: { values: [{ content: 'hi' }] } },
    }) as { nodes: Array<Record<string, unknown>> };
    delete noCredential.nodes[1]?.credentials;
    const a = await runFixture(noCredential as never, deps);
    expect(a.outcome.state.error?.message).toBe('No openAiApi credential is set on the node');

    const noModel = await runFixture(
      workflow({ typeVersion: 1.8, parameters: { messages: { values: [{ content: 'hi' }] } } }) as never,
      deps,
    );
    expect(noModel.outcome.state.error?.message).toMatch(/No model is chosen/);

    api.queue(
      chat(null, [{ id: 'c1', type: 'function', function: { name: 'calculator', arguments: '{oops' } }]),
    );
    const badArgs = await runFixture(
      workflow(
        { typeVersion: 1.8, parameters: { modelId: 'gpt-4o', messages: { values: [{ content: 'hi' }] } } },
        [
          {
            id: 'c',
            name: 'Calculator',
            type: '@n8n/n8n-nodes-langchain.toolCalculator',
            typeVersion: 1,
            position: [200, 200],
            parameters: {},
          },
        ],
        ['Calculator'],
      ) as never,
      deps,
    );
    expect(badArgs.outcome.state.error?.message).toMatch(/arguments that are not JSON: \{oops/);
    expect(api.requests).toHaveLength(1);
  });

  it('an image over 20 MB fails its item before any upload', async () => {
    const big = Buffer.alloc(21 * 1024 * 1024, 1);
    const def = workflow({
      typeVersion: 1.8,
      parameters: {
        resource: 'image',
        operation: 'analyze',
        inputType: 'base64',
        modelId: 'gpt-4o',
        options: {},
      },
    });
    const { outcome } = await runFixture(def as never, deps, [
      { json: {}, binary: { data: { data: big.toString('base64'), mimeType: 'image/png' } } },
    ]);
    expect(outcome.state.error?.message).toMatch(/over 20 MB/);
    expect(api.requests).toHaveLength(0);
  });
});

describe('n8n’s first OpenAI node (n8n-nodes-base.openAi v1)', () => {
  const users = (n: number) =>
    JSON.stringify(
      Array.from({ length: n }, (_, i) => ({
        user_name: `Ada Ahab ${i}`,
        user_email: `ada${i}@example.com`,
        subscribed: i % 2 === 0,
        date_subscribed: i % 2 === 0 ? `2023-01-0${i + 1}` : '',
      })),
    );

  it('Prepare CSV files with GPT-4: three chat completions become three CSV files on disk', async () => {
    const { mkdtempSync, readdirSync, readFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const path = await import('node:path');
    const filesDir = mkdtempSync(path.join(tmpdir(), 'openai-legacy-'));
    api.queue({
      body: {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        choices: [0, 1, 2].map((index) => ({
          index,
          message: { role: 'assistant', content: users(2) },
          finish_reason: 'stop',
        })),
        usage: { prompt_tokens: 100, completion_tokens: 300, total_tokens: 400 },
      },
    });
    const { outcome, outputs } = await runFixture(loadFixture('templates/openai-legacy-csv-files.json'), {
      ...deps,
      host: {
        filesDir,
        executeCommand: { enabled: false, timeoutMs: 1_000, maxOutputBytes: 1_024 },
        ssh: { enabled: false, timeoutMs: 1_000, maxOutputBytes: 1_024 },
        tcpTarget: async () => {
          throw new Error('no TCP here');
        },
      },
    });
    expect(outcome.state.error).toBeNull();
    // n8n's routing: the credential's url without its last segment, then /v1/chat/completions.
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]?.url).toBe('/v1/chat/completions');
    expect(api.requests[0]?.body).toMatchObject({ model: 'gpt-4', max_tokens: 2500, n: 3, temperature: 1 });
    expect((api.requests[0]?.body.messages as Array<{ role: string }> | undefined)?.[0]?.role).toBe('user');
    // Simplified: one item per choice.
    expect(outputs.OpenAI).toHaveLength(3);
    expect(outputs.OpenAI?.[2]).toMatchObject({ index: 2, finish_reason: 'stop' });
    const written = readdirSync(path.join(filesDir, '.n8n')).sort();
    expect(written).toEqual(['funny_names_1.csv', 'funny_names_2.csv', 'funny_names_3.csv']);
    const csv = readFileSync(path.join(filesDir, '.n8n', 'funny_names_1.csv'), 'utf8');
    expect(csv.split('\n')[0]).toBe('user_name,user_email,subscribed,date_subscribed');
    // Booleans as SheetJS writes them in n8n's Spreadsheet File v2.
    expect(csv).toContain('Ada Ahab 1,ada1@example.com,FALSE,');
  });

  const legacy = (parameters: Record<string, unknown>) => ({
    name: 'legacy',
    nodes: [
      manual,
      {
        id: 'o',
        name: 'OpenAI',
        type: 'n8n-nodes-base.openAi',
        typeVersion: 1,
        position: [200, 0],
        credentials: { openAiApi: { id: 'c', name: 'OpenAI' } },
        parameters,
      },
    ],
    connections: { Start: { main: [[{ node: 'OpenAI', type: 'main', index: 0 }]] } },
  });

  it('Text → Complete (its default) trims each choice’s text; Edit and Moderate post to their endpoints', async () => {
    api.queue({
      body: { choices: [{ text: '\n\n A summary. ', index: 0, logprobs: null, finish_reason: 'stop' }] },
    });
    const complete = await runFixture(
      legacy({ prompt: 'Tl;dr:', options: { maxTokens: 50 } }) as never,
      deps,
    );
    expect(complete.outcome.state.error).toBeNull();
    expect(api.requests[0]?.url).toBe('/v1/completions');
    expect(api.requests[0]?.body).toEqual({ model: 'text-davinci-003', max_tokens: 50, prompt: 'Tl;dr:' });
    expect(complete.outputs.OpenAI).toEqual([
      { text: 'A summary.', index: 0, logprobs: null, finish_reason: 'stop' },
    ]);

    api.queue({ body: { choices: [{ text: 'Hallo', index: 0 }] } });
    await runFixture(
      legacy({ operation: 'edit', input: 'Hello', instruction: 'to German', options: {} }) as never,
      deps,
    );
    expect(api.requests[1]?.url).toBe('/v1/edits');
    expect(api.requests[1]?.body).toEqual({
      model: 'text-davinci-edit-001',
      input: 'Hello',
      instruction: 'to German',
    });

    api.queue({ body: { id: 'modr-1', results: [{ flagged: true, categories: { violence: true } }] } });
    const moderated = await runFixture(
      legacy({ operation: 'moderate', input: 'x', options: {} }) as never,
      deps,
    );
    expect(api.requests[2]?.body).toEqual({ model: 'text-moderation-latest', input: 'x' });
    expect(moderated.outputs.OpenAI).toEqual([{ flagged: true, categories: { violence: true } }]);
  });

  it('Image → Create answers binary images by default, URLs when asked', async () => {
    api.queue({
      body: {
        data: [
          { b64_json: Buffer.from('img-1').toString('base64') },
          { b64_json: Buffer.from('img-2').toString('base64') },
        ],
      },
    });
    const made = await runFixture(
      legacy({ resource: 'image', prompt: 'a comic cover', options: { n: 2, size: '512x512' } }) as never,
      deps,
    );
    expect(made.outcome.state.error).toBeNull();
    expect(api.requests[0]?.body).toEqual({
      model: 'dall-e-2',
      prompt: 'a comic cover',
      response_format: 'b64_json',
      n: 2,
      size: '512x512',
    });
    const images = runData(made.outcome, 'OpenAI');
    expect(images.map((i) => Buffer.from(i.binary?.data?.data ?? '', 'base64').toString())).toEqual([
      'img-1',
      'img-2',
    ]);
    expect(images[0]?.json).toEqual({});

    api.queue({ body: { data: [{ url: 'https://img.example/a.png' }] } });
    const urls = await runFixture(
      legacy({ resource: 'image', prompt: 'p', responseFormat: 'imageUrl', options: {} }) as never,
      deps,
    );
    expect(api.requests[1]?.body.response_format).toBe('url');
    expect(urls.outputs.OpenAI).toEqual([{ url: 'https://img.example/a.png' }]);
  });

  it('v1.1 exports name the chat model `chatModel`: it is the model sent, over `model`', async () => {
    api.queue({ body: { choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' } }] } });
    const wf = legacy({
      resource: 'chat',
      chatModel: 'gpt-4-1106-preview',
      prompt: { messages: [{ content: 'Hello' }] },
      options: {},
    }) as { nodes: Array<{ typeVersion: number }> };
    (wf.nodes[1] as { typeVersion: number }).typeVersion = 1.1;
    const done = await runFixture(wf as never, deps);
    expect(done.outcome.state.error).toBeNull();
    expect(api.requests[0]?.body).toEqual({
      model: 'gpt-4-1106-preview',
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(done.outputs.OpenAI).toEqual([{ index: 0, message: { role: 'assistant', content: 'Hi' } }]);
  });

  it('an operation the resource does not have is refused at save', async () => {
    await expect(
      runFixture(legacy({ resource: 'chat', operation: 'edit', options: {} }) as never, deps),
    ).rejects.toThrow(/'edit' is not an operation of the chat resource \(complete\)/);
  });
});
