import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { HeldUpstream } from './support/held-upstream.js';
import { reader, streamingAgent } from './support/streamed-chat.js';
import { createCredential, createWorkflow, settled, workflowPlatform } from './support.js';

/**
 * n8n's Chat Trigger with `responseMode: 'streaming'` over real HTTP: n8n's JSON lines, the AI Agent's
 * text sent while the run goes on (the upstream's second answer is held until the client has read the
 * first), an error mid-stream, a workflow no node streams from, and a client that goes away.
 */

const message = (content: string | null, calls: Array<{ name: string; arguments: string }> = []) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model: 'gpt-4o-mini',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content,
        ...(calls.length
          ? {
              tool_calls: calls.map((c, i) => ({
                id: `call_${i}`,
                type: 'function',
                function: c,
              })),
            }
          : {}),
      },
      finish_reason: calls.length ? 'tool_calls' : 'stop',
    },
  ],
  usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 },
});

const agentChat = (webhookId: string, cred: string, agentOptions: Record<string, unknown> = {}) => ({
  name: `stream ${webhookId}`,
  nodes: [
    {
      id: 'chat-node',
      name: 'When chat message received',
      type: '@n8n/n8n-nodes-langchain.chatTrigger',
      typeVersion: 1.1,
      position: [0, 0],
      webhookId,
      parameters: { public: true, options: { responseMode: 'streaming' } },
    },
    {
      id: 'agent-node',
      name: 'AI Agent',
      type: '@n8n/n8n-nodes-langchain.agent',
      typeVersion: 2.2,
      position: [200, 0],
      parameters: { options: agentOptions },
    },
    {
      id: 'model-node',
      name: 'OpenAI Chat Model',
      type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
      typeVersion: 1.2,
      position: [200, 200],
      parameters: { model: { __rl: true, value: 'gpt-4o-mini', mode: 'list' }, options: {} },
      credentials: { openAiApi: { id: cred, name: 'openai' } },
    },
    {
      id: 'calc-node',
      name: 'Calculator',
      type: '@n8n/n8n-nodes-langchain.toolCalculator',
      typeVersion: 1,
      position: [400, 200],
      parameters: {},
    },
  ],
  connections: {
    'When chat message received': { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] },
    'OpenAI Chat Model': { ai_languageModel: [[{ node: 'AI Agent', type: 'ai_languageModel', index: 0 }]] },
    Calculator: { ai_tool: [[{ node: 'AI Agent', type: 'ai_tool', index: 0 }]] },
  },
  settings: {},
});

describe.each(await testDialects())('Chat Trigger streaming answers on %s', (dialect) => {
  let p: TestPlatform;
  let base = '';
  const upstream = new HeldUpstream();
  let cred = '';

  beforeAll(async () => {
    await upstream.start();
    p = await workflowPlatform(dialect);
    await p.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(p.app.server.address() as AddressInfo).port}`;
    cred = await createCredential(p, 'openai', 'openAiApi', {
      apiKey: 'sk-test',
      url: `${upstream.base}/v1`,
    });
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
  const chat = (webhookId: string, chatInput: string, signal?: AbortSignal) =>
    fetch(`${base}/webhook/${webhookId}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'sendMessage', sessionId: 's-1', chatInput }),
      ...(signal ? { signal } : {}),
    });
  async function lastExecution(workflowId: string) {
    const list = await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${workflowId}` });
    const id = (list.json() as { data: Array<{ id: string }> }).data[0]?.id ?? '';
    return settled(p, id);
  }

  it("streams the agent's text as n8n's JSON lines while the run goes on", async () => {
    const wf = await active(agentChat('stream-ok', cred));
    const res = await chat('stream-ok', 'What is 2+2?');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const read = reader(res);
    // The model's first token reaches the client while the upstream's answer is still held open.
    const first = read.until((c) => c.type === 'item' && c.content === 'Let me ');
    await upstream.answerStream(
      ['Let me ', 'compute.'],
      [{ name: 'calculator', arguments: '{"input":"2+2"}' }],
      first,
    );
    await read.until((c) => c.type === 'item' && c.content === 'compute.');
    await upstream.answerStream(['It is ', '4.']);
    const chunks = await read.done;
    expect(chunks.map((c) => [c.type, c.content])).toEqual([
      ['begin', undefined],
      ['item', 'Let me '],
      ['item', 'compute.'],
      ['item', 'It is '],
      ['item', '4.'],
      ['end', undefined],
    ]);
    expect(upstream.bodies.at(-1)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    for (const c of chunks) {
      expect(c.metadata).toMatchObject({
        nodeId: 'agent-node',
        nodeName: 'AI Agent',
        itemIndex: 0,
        runIndex: 0,
      });
      expect(typeof c.metadata.timestamp).toBe('number');
    }
    const execution = await lastExecution(wf);
    expect(execution.status).toBe('success');
  });

  it('ends with an error chunk when the run fails mid-stream', async () => {
    await active(agentChat('stream-fail', cred));
    const res = await chat('stream-fail', 'What is 2+2?');
    const read = reader(res);
    await upstream.answerStream(['Working on it.'], [{ name: 'calculator', arguments: '{"input":"2+2"}' }]);
    await read.until((c) => c.type === 'item');
    await upstream.answer({ error: { message: 'upstream is down' } }, 400);
    const chunks = await read.done;
    expect(res.status).toBe(200);
    expect(chunks.map((c) => c.type)).toEqual(['begin', 'item', 'error', 'end']);
    expect(chunks[2]?.content).toMatch(/upstream is down/);
  });

  it("answers the last node's answer as one item when no node streams (enableStreaming off)", async () => {
    await active(agentChat('stream-off', cred, { enableStreaming: false }));
    // Nothing streams before the end here: the head comes with the answer.
    const pending = chat('stream-off', 'Hi');
    await upstream.answer(message('Hello there.'));
    expect(upstream.bodies.at(-1)?.stream).toBe(false);
    const chunks = await reader(await pending).done;
    expect(chunks.map((c) => [c.type, c.content, c.metadata.nodeName])).toEqual([
      ['begin', undefined, 'When chat message received'],
      ['item', 'Hello there.', 'When chat message received'],
      ['end', undefined, 'When chat message received'],
    ]);
  });

  it('a client that goes away stops nothing: the execution finishes and is stored', async () => {
    const wf = await active(agentChat('stream-gone', cred));
    const abort = new AbortController();
    const res = await chat('stream-gone', 'What is 2+2?', abort.signal);
    const read = reader(res);
    read.done.catch(() => undefined);
    await upstream.answerStream(['Computing.'], [{ name: 'calculator', arguments: '{"input":"2+2"}' }]);
    await read.until((c) => c.type === 'item');
    abort.abort();
    // A whole answer to a streamed request is read as one.
    await upstream.answer(message('It is 4.'));
    const execution = await lastExecution(wf);
    expect(execution.status).toBe('success');
    const agent = (execution.data as { resultData: { runData: Record<string, Array<{ data: unknown }>> } })
      .resultData.runData['AI Agent'];
    expect(JSON.stringify(agent)).toContain('It is 4.');
  });

  it("n8n's Webhook node (v2.1, responseMode 'streaming') streams the agent's tokens the same way", async () => {
    const hook = {
      parameters: {
        httpMethod: 'POST',
        path: 'agent-stream',
        responseMode: 'streaming',
        options: {},
      },
      id: 'hook-node',
      name: 'Webhook',
      type: 'n8n-nodes-base.webhook',
      typeVersion: 2.1,
      position: [0, 0],
      webhookId: 'b1f0c6d2-5d36-4d3e-9c1e-0f7a2b9c1d11',
    };
    const body = streamingAgent(
      'hook-stream',
      [
        {
          name: 'OpenAI Chat Model',
          type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
          typeVersion: 1.2,
          parameters: { model: { __rl: true, value: 'gpt-4o-mini', mode: 'list' }, options: {} },
          credentials: { openAiApi: { id: cred, name: 'openai' } },
        },
      ],
      { trigger: hook, agent: { promptType: 'define', text: '={{ $json.body.message }}' } },
    );
    const wf = await active(body);
    const res = await fetch(`${base}/webhook/agent-stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Say hello' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const read = reader(res);
    const first = read.until((c) => c.type === 'item' && c.content === 'Hello ');
    await upstream.answerStream(['Hello ', 'from the webhook.'], [], first);
    const chunks = await read.done;
    expect(chunks.map((c) => [c.type, c.content, c.metadata.nodeName])).toEqual([
      ['begin', undefined, 'AI Agent'],
      ['item', 'Hello ', 'AI Agent'],
      ['item', 'from the webhook.', 'AI Agent'],
      ['end', undefined, 'AI Agent'],
    ]);
    const sent = upstream.bodies.at(-1) as { messages: Array<{ role: string; content: string }> };
    expect(sent.messages.at(-1)).toEqual({ role: 'user', content: 'Say hello' });
    expect((await lastExecution(wf)).status).toBe('success');
  });

  it("a streaming Webhook whose workflow streams nothing answers its last node's JSON as one item", async () => {
    await active({
      name: 'hook-no-stream',
      nodes: [
        {
          parameters: { httpMethod: 'POST', path: 'plain-stream', responseMode: 'streaming', options: {} },
          id: 'hook-plain',
          name: 'Webhook',
          type: 'n8n-nodes-base.webhook',
          typeVersion: 2.1,
          position: [0, 0],
          webhookId: 'c2a1d7e3-6e47-4e4f-8d2f-1a8b3c0d2e22',
        },
        {
          parameters: {
            assignments: {
              assignments: [{ id: 'a1', name: 'echo', value: '={{ $json.body.message }}', type: 'string' }],
            },
            options: {},
          },
          id: 'set-node',
          name: 'Edit Fields',
          type: 'n8n-nodes-base.set',
          typeVersion: 3.4,
          position: [200, 0],
        },
      ],
      connections: { Webhook: { main: [[{ node: 'Edit Fields', type: 'main', index: 0 }]] } },
      settings: {},
    });
    const res = await fetch(`${base}/webhook/plain-stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'ping' }),
    });
    expect(res.status).toBe(200);
    const chunks = await reader(res).done;
    expect(chunks.map((c) => [c.type, c.content])).toEqual([
      ['begin', undefined],
      ['item', JSON.stringify({ echo: 'ping' })],
      ['end', undefined],
    ]);
  });

  it('a refused call (bad JSON) is answered in the error shape, not as a stream', async () => {
    await active(agentChat('stream-bad', cred));
    const res = await fetch(`${base}/webhook/stream-bad/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"action":',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });
});
