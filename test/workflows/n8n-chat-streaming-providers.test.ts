import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import type { ChatEvent, ChatMessage } from '../../src/modules/llm/index.js';
import type { EngineDeps } from '../../src/modules/workflows/engine/types.js';
import type { ChatModel } from '../../src/modules/workflows/nodes/langchain/ai-parts.js';
import { anthropicModel } from '../../src/modules/workflows/nodes/langchain/anthropic-wire.js';
import { geminiModel } from '../../src/modules/workflows/nodes/langchain/gemini-wire.js';
import { ollamaModel } from '../../src/modules/workflows/nodes/langchain/ollama-wire.js';
import type { TestPlatform } from '../helpers/platform.js';
import {
  anthropicStream,
  geminiStream,
  type HeldCall,
  HeldUpstream,
  ollamaStream,
  type StreamedAnswer,
} from './support/held-upstream.js';
import { type ModelNode, reader, streamingAgent } from './support/streamed-chat.js';
import { createCredential, createWorkflow, settled, workflowPlatform } from './support.js';

/**
 * Token streaming of n8n's Anthropic, Ollama and Google Gemini chat models, each on its provider's own
 * wire format (Anthropic's Messages events with `input_json_delta` tool arguments, Ollama's `/api/chat`
 * JSON lines, Gemini's `streamGenerateContent?alt=sse`): through a streaming Chat Trigger over real HTTP
 * (the upstream holds its answer until the client has read the first token), and at the model itself
 * (usage from the stream, tool calls put together, a refusal before the first token thrown where the
 * fallback model takes over, a failure mid-stream). SQLite only: the database plays no part here (the
 * OpenAI streaming suite runs on both).
 */

interface Provider {
  name: string;
  /** The path (and query) a streamed call goes to. */
  streamUrl: string;
  write: (res: ServerResponse, answer: StreamedAnswer) => Promise<void>;
  credential: (base: string) => { type: string; data: Record<string, string> };
  node: (credId: string) => ModelNode;
  model: (deps: EngineDeps, base: string) => ChatModel;
  /** The request asked for a stream, in the provider's words. */
  streamed: (call: HeldCall) => void;
  /** The second round's request carries the calculator's answer for the model's call. */
  toolResult: (body: Record<string, unknown>) => void;
  /** A failure after the first token, in the provider's stream format. */
  failMidStream: (res: ServerResponse) => void;
  /** A whole answer `Whole.` (1 prompt token, 2 completion tokens) in the provider's JSON. */
  whole: Record<string, unknown>;
}

const last = (list: unknown) => (list as unknown[]).at(-1) as Record<string, unknown>;

const PROVIDERS: Provider[] = [
  {
    name: 'Anthropic',
    streamUrl: '/v1/messages',
    write: anthropicStream,
    credential: (base) => ({ type: 'anthropicApi', data: { apiKey: 'sk-ant-test', url: base } }),
    node: (id) => ({
      name: 'Anthropic Chat Model',
      type: '@n8n/n8n-nodes-langchain.lmChatAnthropic',
      typeVersion: 1.3,
      parameters: { model: { __rl: true, mode: 'list', value: 'claude-test' }, options: {} },
      credentials: { anthropicApi: { id, name: 'anthropic' } },
    }),
    model: (deps, base) =>
      anthropicModel(deps, {
        base,
        apiKey: 'sk-ant-test',
        model: 'claude-test',
        body: {},
        timeoutMs: 10_000,
      }),
    streamed: (call) => {
      expect(call.body.stream).toBe(true);
      expect(call.headers['x-api-key']).toBe('sk-ant-test');
      expect(call.headers.accept).toBe('text/event-stream');
    },
    toolResult: (body) => {
      const turn = last(body.messages);
      expect(turn).toEqual({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '4' }],
      });
      const call = (body.messages as Array<{ role: string; content: unknown }>).at(-2);
      expect(call?.content).toContainEqual({
        type: 'tool_use',
        id: 'toolu_1',
        name: 'calculator',
        input: { input: '2+2' },
      });
    },
    failMidStream: (res) => {
      res.write(
        `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`,
      );
      res.end();
    },
    whole: {
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'Whole.' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 1, output_tokens: 2 },
    },
  },
  {
    name: 'Ollama',
    streamUrl: '/api/chat',
    write: ollamaStream,
    credential: (base) => ({ type: 'ollamaApi', data: { baseUrl: base } }),
    node: (id) => ({
      name: 'Ollama Chat Model',
      type: '@n8n/n8n-nodes-langchain.lmChatOllama',
      typeVersion: 1,
      parameters: { model: 'llama3.2', options: {} },
      credentials: { ollamaApi: { id, name: 'ollama' } },
    }),
    model: (deps, base) =>
      ollamaModel(deps, { base, headers: {}, model: 'llama3.2', options: {}, top: {}, timeoutMs: 10_000 }),
    streamed: (call) => {
      expect(call.body.stream).toBe(true);
      expect(call.headers.accept).toBe('application/x-ndjson');
    },
    toolResult: (body) => {
      expect(last(body.messages)).toEqual({ role: 'tool', content: '4', tool_name: 'calculator' });
    },
    failMidStream: (res) => {
      res.end(`${JSON.stringify({ error: 'model runner has unexpectedly stopped' })}\n`);
    },
    whole: {
      model: 'llama3.2',
      message: { role: 'assistant', content: 'Whole.' },
      done: true,
      done_reason: 'stop',
      prompt_eval_count: 1,
      eval_count: 2,
    },
  },
  {
    name: 'Google Gemini',
    streamUrl: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    write: geminiStream,
    credential: (base) => ({ type: 'googlePalmApi', data: { apiKey: 'gm-test', host: base } }),
    node: (id) => ({
      name: 'Google Gemini Chat Model',
      type: '@n8n/n8n-nodes-langchain.lmChatGoogleGemini',
      typeVersion: 1,
      parameters: { modelName: 'models/gemini-2.5-flash', options: {} },
      credentials: { googlePalmApi: { id, name: 'gemini' } },
    }),
    model: (deps, base) =>
      geminiModel(deps, {
        host: base,
        apiKey: 'gm-test',
        model: 'models/gemini-2.5-flash',
        generationConfig: {},
        safetySettings: [],
        timeoutMs: 10_000,
      }),
    streamed: (call) => {
      expect(call.headers['x-goog-api-key']).toBe('gm-test');
      expect(call.headers.accept).toBe('text/event-stream');
    },
    toolResult: (body) => {
      expect(last(body.contents)).toEqual({
        role: 'user',
        parts: [{ functionResponse: { name: 'calculator', response: { result: '4' } } }],
      });
    },
    failMidStream: (res) => {
      res.end(
        `data: ${JSON.stringify({ error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' } })}\r\n\r\n`,
      );
    },
    whole: {
      candidates: [{ content: { role: 'model', parts: [{ text: 'Whole.' }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2 },
    },
  },
];

const upstream = new HeldUpstream();
let p: TestPlatform;
let base = '';
let deps: EngineDeps;
const creds = new Map<string, string>();

beforeAll(async () => {
  await upstream.start();
  p = await workflowPlatform('sqlite');
  await p.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(p.app.server.address() as AddressInfo).port}`;
  for (const provider of PROVIDERS) {
    const { type, data } = provider.credential(upstream.base);
    creds.set(provider.name, await createCredential(p, provider.name, type, data));
  }
  deps = {
    http: createOutboundHttp({ allowHosts: [new URL(upstream.base).host], timeoutMs: 10_000 }),
  } as unknown as EngineDeps;
});
afterAll(async () => {
  p.app.server.closeAllConnections();
  await p.close();
  await upstream.stop();
});

async function active(body: unknown) {
  const id = await createWorkflow(p, body);
  const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate` });
  expect(res.statusCode).toBe(200);
  return id;
}
const chat = (webhookId: string, chatInput: string) =>
  fetch(`${base}/webhook/${webhookId}/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ action: 'sendMessage', sessionId: 's-1', chatInput }),
  });
async function lastExecution(workflowId: string) {
  const list = await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${workflowId}` });
  const id = (list.json() as { data: Array<{ id: string }> }).data[0]?.id ?? '';
  return settled(p, id);
}

const question: ChatMessage[] = [
  { role: 'system', content: 'Use the calculator.' },
  { role: 'user', content: 'What is 2+2?' },
];
const calculator = [
  {
    type: 'function' as const,
    function: {
      name: 'calculator',
      description: 'Evaluates arithmetic',
      parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] },
    },
  },
];

describe.each(PROVIDERS)('$name chat model streams tokens', (provider) => {
  it("through a streaming Chat Trigger: each token reaches the client while the model's answer is open", async () => {
    const hook = `stream-${provider.name.toLowerCase().replace(/\s+/g, '-')}`;
    const wf = await active(
      streamingAgent(hook, [provider.node(creds.get(provider.name) as string)], { webhookId: hook }),
    );
    const res = await chat(hook, 'What is 2+2?');
    expect(res.status).toBe(200);
    const read = reader(res);

    const firstCall = await upstream.next();
    expect(firstCall.url).toBe(provider.streamUrl);
    provider.streamed(firstCall);
    await provider.write(firstCall.res, {
      pieces: ['Let me ', 'compute.'],
      calls: [{ name: 'calculator', arguments: '{"input": "2+2"}' }],
      gate: read.until((c) => c.type === 'item' && c.content === 'Let me '),
    });
    const secondCall = await upstream.next();
    expect(secondCall.url).toBe(provider.streamUrl);
    provider.toolResult(secondCall.body);
    await provider.write(secondCall.res, {
      pieces: ['It is ', '4.'],
      gate: read.until((c) => c.type === 'item' && c.content === 'It is '),
    });
    const chunks = await read.done;
    expect(chunks.map((c) => [c.type, c.content])).toEqual([
      ['begin', undefined],
      ['item', 'Let me '],
      ['item', 'compute.'],
      ['item', 'It is '],
      ['item', '4.'],
      ['end', undefined],
    ]);
    const execution = await lastExecution(wf);
    expect(execution.status).toBe('success');
    expect(JSON.stringify(execution.data)).toContain('It is 4.');
  });

  it('at the model: text as it comes, tool calls put together, usage from the stream', async () => {
    const answer = provider.model(deps, upstream.base).chat(question, calculator, { stream: true });
    const call = await upstream.next();
    provider.streamed(call);
    let release: () => void = () => undefined;
    const writing = provider.write(call.res, {
      pieces: ['Let me ', 'compute.'],
      calls: [
        { name: 'calculator', arguments: '{"input": "2+2"}' },
        { name: 'calculator', arguments: '{"input": "3*3"}' },
      ],
      gate: new Promise<void>((r) => {
        release = r;
      }),
      usage: { prompt: 21, completion: 13 },
    });
    // The answer is handed over at its first token, the rest still held upstream.
    const { events } = await answer;
    const iterator = events[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toEqual({ type: 'delta', content: 'Let me ' });
    release();
    await writing;
    const rest: ChatEvent[] = [];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) rest.push(next.value);
    expect(rest[0]).toEqual({ type: 'delta', content: 'compute.' });
    const calls = rest.find((e) => e.type === 'delta' && e.toolCalls) as { toolCalls: unknown[] };
    expect(calls.toolCalls).toMatchObject([
      { name: 'calculator', arguments: { input: '2+2' } },
      { name: 'calculator', arguments: { input: '3*3' } },
    ]);
    const ids = (calls.toolCalls as Array<{ id?: string }>).map((c) => c.id);
    expect(new Set(ids).size).toBe(2);
    expect(rest.at(-1)).toEqual({
      type: 'done',
      doneReason: 'tool_calls',
      usage: { promptTokens: 21, completionTokens: 13, estimated: false },
    });
  });

  it('a refusal before the first token is thrown by the call itself (where the fallback model takes over)', async () => {
    const answer = provider.model(deps, upstream.base).chat(question, undefined, { stream: true });
    const call = await upstream.next();
    call.res
      .writeHead(429, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { message: 'Rate limit reached' } }));
    await expect(answer).rejects.toThrow(/refused the request \(429\).*Rate limit reached/);
  });

  it('an upstream answering one JSON document to a streamed request is read as one answer', async () => {
    const answer = provider.model(deps, upstream.base).chat(question, undefined, { stream: true });
    const call = await upstream.next();
    call.res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(provider.whole));
    const events: ChatEvent[] = [];
    for await (const e of (await answer).events) events.push(e);
    expect(events[0]).toEqual({ type: 'delta', content: 'Whole.' });
    expect(events.at(-1)).toMatchObject({
      type: 'done',
      usage: { promptTokens: 1, completionTokens: 2, estimated: false },
    });
  });

  it('a failure in the stream after the first token ends the events with its message', async () => {
    const answer = provider.model(deps, upstream.base).chat(question, undefined, { stream: true });
    const call = await upstream.next();
    // The first token is written before the (never opened) gate; the failure follows it.
    void provider.write(call.res, { pieces: ['Partial'], gate: new Promise<void>(() => undefined) });
    provider.failMidStream(call.res);
    const events: ChatEvent[] = [];
    const reading = (async () => {
      for await (const e of (await answer).events) events.push(e);
    })();
    await expect(reading).rejects.toThrow(/failed while answering: \w/);
    expect(events).toEqual([{ type: 'delta', content: 'Partial' }]);
  });
});

describe('the fallback model streams when the first fails before writing', () => {
  it("an Anthropic stream opening with an error event: the Ollama fallback's tokens are streamed", async () => {
    const [anthropic, ollama] = PROVIDERS as [Provider, Provider];
    const wf = await active(
      streamingAgent('stream-fallback', [
        anthropic.node(creds.get('Anthropic') as string),
        { ...ollama.node(creds.get('Ollama') as string), name: 'Fallback Model' },
      ]),
    );
    const res = await chat('stream-fallback', 'Hello?');
    const read = reader(res);
    const primary = await upstream.next();
    expect(primary.url).toBe('/v1/messages');
    primary.res.writeHead(200, { 'content-type': 'text/event-stream' });
    primary.res.write(
      `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: 3, output_tokens: 0 } } })}\n\n`,
    );
    anthropic.failMidStream(primary.res);
    const fallback = await upstream.next();
    expect(fallback.url).toBe('/api/chat');
    await ollamaStream(fallback.res, {
      pieces: ['Hi ', 'there.'],
      gate: read.until((c) => c.type === 'item' && c.content === 'Hi '),
    });
    const chunks = await read.done;
    expect(chunks.map((c) => [c.type, c.content])).toEqual([
      ['begin', undefined],
      ['item', 'Hi '],
      ['item', 'there.'],
      ['end', undefined],
    ]);
    expect((await lastExecution(wf)).status).toBe('success');
  });
});
