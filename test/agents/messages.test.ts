import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { promptTokens } from '../support/fake-llm/fake-base.js';
import { echoChunks, echoReply } from '../support/fake-llm/index.js';
import {
  type Agent,
  type AgentEvent,
  CORPUS,
  type Conversation,
  call,
  chatCalls,
  createAgent,
  createConversation,
  deltasOf,
  expectError,
  expectNamesField,
  type Message,
  type Page,
  type Reply,
  seedTopic,
  send,
  sseEvents,
  textOf,
} from './support.js';

describe.each(await testDialects())('agents: messages on %s', (dialect) => {
  let bed: LlmTestbed;
  let docIds: string[];
  let plain: Agent;
  let grounded: Agent;

  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
    docIds = await seedTopic(bed, 'kb');
    plain = await createAgent(bed, { name: 'plain', model: 'llama3.2', instructions: 'You are terse.' });
    grounded = await createAgent(bed, {
      name: 'grounded',
      model: 'llama3.2',
      instructions: 'Answer from the passages.',
      knowledgeTopics: ['kb'],
    });
  });
  afterAll(() => bed?.close());
  beforeEach(() => {
    bed.ollama.reset();
    bed.openai.reset();
  });

  const stream = (agentId: string, body: Record<string, unknown>, key?: string): Promise<Reply> =>
    call(bed, 'POST', `/api/agents/${agentId}/messages`, {
      body: { ...body, stream: true },
      ...(key ? { key } : {}),
    });

  it('a JSON turn answers [user, assistant], usage and sources, and creates a conversation', async () => {
    const turn = await send(bed, plain.id, { content: 'hello there' });
    expect(turn).toEqual({
      conversationId: expect.any(String),
      runId: expect.stringMatching(/^run_/),
      status: 'completed',
      messages: [expect.any(Object), expect.any(Object)],
      usage: { promptTokens: expect.any(Number), completionTokens: expect.any(Number) },
      sources: [],
    });
    const [user, assistant] = turn.messages;
    expect(user).toEqual({
      id: expect.any(String),
      conversationId: turn.conversationId,
      role: 'user',
      content: 'hello there',
      steps: [],
      sources: [],
      usage: null,
      createdAt: expect.any(String),
    });
    expect(assistant).toMatchObject({
      conversationId: turn.conversationId,
      role: 'assistant',
      content: echoReply('hello there'),
      sources: [],
      usage: turn.usage,
    });
    expect(assistant.id).not.toBe(user.id);
    // One model call, its step recorded; usage is what the upstream counted.
    const calls = chatCalls(bed.ollama);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.system).toContain('You are terse.');
    expect(turn.usage).toEqual({
      promptTokens: promptTokens(calls[0]?.messages),
      completionTokens: echoChunks('hello there').length,
    });
    expect(assistant.steps).toEqual([
      expect.objectContaining({
        type: 'model',
        name: expect.stringMatching(/llama3\.2/),
        ms: expect.any(Number),
      }),
    ]);
    // The conversation exists, for this agent, with both messages.
    const conv = await call(bed, 'GET', `/api/conversations/${turn.conversationId}`);
    expect(conv.status, conv.text).toBe(200);
    const detail = conv.json() as Conversation & { messages: Page<Message> };
    expect(detail.agentId).toBe(plain.id);
    expect(detail.messages.data).toEqual([user, assistant]);
  });

  it('retrieved passages from the agent’s topics reach the system prompt and come back as sources', async () => {
    const turn = await send(bed, grounded.id, { content: 'Why do sea otters hold hands while they sleep?' });
    expect(turn.sources.length).toBeGreaterThan(0);
    expect(turn.sources[0]).toEqual({
      documentId: docIds[0],
      title: 'Otters',
      topic: 'kb',
      pageNumber: expect.any(Number),
      score: expect.any(Number),
      text: expect.stringContaining('hold hands'),
    });
    const [, assistant] = turn.messages;
    expect(assistant.sources).toEqual(turn.sources);
    const system = chatCalls(bed.ollama)[0]?.system ?? '';
    expect(system).toContain('Answer from the passages.');
    expect(system).toContain('Sea otters hold hands while they sleep');
    // The question itself goes as the user message, not inside the system prompt.
    const last = chatCalls(bed.ollama)[0]?.messages.at(-1);
    expect(last).toMatchObject({ role: 'user', content: 'Why do sea otters hold hands while they sleep?' });
    const retrieval = assistant.steps.find((s) => s.type === 'retrieval');
    expect(retrieval).toMatchObject({ type: 'retrieval', ms: expect.any(Number) });
    expect(JSON.stringify(retrieval?.output)).toContain(docIds[0] as string);
    expect(assistant.steps.map((s) => s.type)).toEqual(['retrieval', 'model']);
    expect(CORPUS[0]?.title).toBe('Otters');
  });

  it('the history of the conversation reaches the model on the next turn, oldest first', async () => {
    const first = await send(bed, plain.id, { content: 'my name is Ada' });
    const second = await send(bed, plain.id, {
      conversationId: first.conversationId,
      content: 'what is my name?',
    });
    expect(second.conversationId).toBe(first.conversationId);
    const calls = chatCalls(bed.ollama);
    expect(calls).toHaveLength(2);
    const turns = (calls[1]?.messages ?? [])
      .filter((m) => m.role !== 'system')
      .map((m) => [m.role, textOf(m.content)]);
    expect(turns).toEqual([
      ['user', 'my name is Ada'],
      ['assistant', echoReply('my name is Ada')],
      ['user', 'what is my name?'],
    ]);
    // Another conversation does not leak into this one.
    await send(bed, plain.id, { content: 'a fresh start' });
    const fresh = chatCalls(bed.ollama)[2]?.messages.filter((m) => m.role !== 'system') ?? [];
    expect(fresh.map((m) => textOf(m.content))).toEqual(['a fresh start']);
  });

  it('the agent’s temperature reaches the upstream', async () => {
    const warm = await createAgent(bed, { model: 'llama3.2', temperature: 0.25 });
    await send(bed, warm.id, { content: 'hi' });
    expect(chatCalls(bed.ollama)[0]?.body.options).toMatchObject({ temperature: 0.25 });
    await send(bed, plain.id, { content: 'hi' });
    expect(
      (chatCalls(bed.ollama)[1]?.body.options as Record<string, unknown> | undefined)?.temperature,
    ).toBeUndefined();
  });

  it('GET /api/agents/{id}/messages?conversationId= pages the conversation oldest first', async () => {
    const first = await send(bed, plain.id, { content: 'one' });
    await send(bed, plain.id, { conversationId: first.conversationId, content: 'two' });
    const url = `/api/agents/${plain.id}/messages?conversationId=${first.conversationId}`;
    const all = await call(bed, 'GET', url);
    expect(all.status, all.text).toBe(200);
    const page = all.json() as Page<Message>;
    expect(page.data.map((m) => [m.role, m.content])).toEqual([
      ['user', 'one'],
      ['assistant', echoReply('one')],
      ['user', 'two'],
      ['assistant', echoReply('two')],
    ]);
    expect(page.nextCursor).toBeNull();
    const p1 = (await call(bed, 'GET', `${url}&limit=3`)).json() as Page<Message>;
    expect(p1.data.map((m) => m.content)).toEqual(['one', echoReply('one'), 'two']);
    expect(p1.nextCursor).toEqual(expect.any(String));
    const p2 = (await call(bed, 'GET', `${url}&limit=3&cursor=${p1.nextCursor}`)).json() as Page<Message>;
    expect(p2.data.map((m) => m.content)).toEqual([echoReply('two')]);
    expect(p2.nextCursor).toBeNull();
    // The stored assistant message is the one the turn answered.
    expect(page.data[1]).toEqual(first.messages[1]);
  });

  it('GET messages: conversationId is required (400); an unknown one is 404', async () => {
    expectNamesField(await call(bed, 'GET', `/api/agents/${plain.id}/messages`), 'conversationId');
    expectError(await call(bed, 'GET', `/api/agents/${plain.id}/messages?conversationId=conv_missing`), 404);
  });

  describe('streaming (SSE)', () => {
    const expectStream = (res: Reply): AgentEvent[] => {
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const events = sseEvents(res.text);
      for (const e of events) {
        expect(e.data.type, JSON.stringify(e)).toBe(e.event);
        expect(e.data.conversationId, JSON.stringify(e)).toEqual(expect.any(String));
      }
      expect(new Set(events.map((e) => e.data.conversationId)).size).toBe(1);
      return events;
    };

    for (const model of ['llama3.2', 'gpt-4o-mini']) {
      it(`frames in order on ${model}: message.created, deltas joined = the answer, message.completed last`, async () => {
        const agent = await createAgent(bed, { model });
        const events = expectStream(await stream(agent.id, { content: 'stream me a reply' }));
        const types = events.map((e) => e.event);
        expect(types[0]).toBe('message.created');
        expect(types.at(-1)).toBe('message.completed');
        expect(types.slice(1, -1).every((t) => t === 'message.delta')).toBe(true);
        expect(types.filter((t) => t === 'message.delta').length).toBe(
          echoChunks('stream me a reply').length,
        );
        const created = events[0]?.data.message as Message;
        expect(created).toMatchObject({ role: 'user', content: 'stream me a reply' });
        const completed = events.at(-1)?.data as { message: Message; usage: unknown; sources: unknown[] };
        expect(completed.message).toMatchObject({
          role: 'assistant',
          content: echoReply('stream me a reply'),
        });
        expect(deltasOf(events)).toBe(completed.message.content);
        expect(completed.usage).toEqual({
          promptTokens: expect.any(Number),
          completionTokens: expect.any(Number),
        });
        expect(completed.sources).toEqual([]);
        // What was streamed is what was stored.
        const conversationId = events[0]?.data.conversationId as string;
        const stored = (
          await call(bed, 'GET', `/api/agents/${agent.id}/messages?conversationId=${conversationId}`)
        ).json() as Page<Message>;
        expect(stored.data).toEqual([created, completed.message]);
      });
    }

    it('an existing conversation streams into it; sources arrive with message.completed', async () => {
      const conv = await createConversation(bed, { agentId: grounded.id });
      const events = expectStream(
        await stream(grounded.id, {
          conversationId: conv.id,
          content: 'Where does the Bell Rock lighthouse stand?',
        }),
      );
      expect(events[0]?.data.conversationId).toBe(conv.id);
      const completed = events.at(-1)?.data as { sources: Array<{ documentId: string }> };
      expect(completed.sources[0]?.documentId).toBe(docIds[1]);
    });

    it('an upstream failure before the first token ends the stream with an error event', async () => {
      bed.ollama.failNext(500, 3);
      const events = expectStream(await stream(plain.id, { content: 'doomed' }));
      expect(events.map((e) => e.event)).toEqual(['message.created', 'error']);
      expect(events[1]?.data).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    });

    it('an upstream failure mid-answer ends with an error event after the deltas, never message.completed', async () => {
      bed.ollama.errorAfterChunks = 2;
      const events = expectStream(await stream(plain.id, { content: 'half of an answer here' }));
      const types = events.map((e) => e.event);
      expect(types[0]).toBe('message.created');
      expect(types.at(-1)).toBe('error');
      expect(types).not.toContain('message.completed');
    });

    it('an unknown agent or conversation answers 404 in JSON before any stream starts', async () => {
      const res = await stream('agt_missing', { content: 'hi' });
      expectError(res, 404, 'AGENT_NOT_FOUND');
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expectError(
        await stream(plain.id, { conversationId: 'conv_missing', content: 'hi' }),
        404,
        'CONVERSATION_NOT_FOUND',
      );
    });
  });

  it('an upstream failure before the first token is a 502 in the platform body (JSON turn)', async () => {
    bed.ollama.failNext(500, 3);
    const res = await call(bed, 'POST', `/api/agents/${plain.id}/messages`, { body: { content: 'doomed' } });
    expectError(res, 502);
  });

  describe('errors', () => {
    const post = (agentId: string, body: unknown) =>
      call(bed, 'POST', `/api/agents/${agentId}/messages`, { body });

    it('an unknown agent is 404', async () => {
      expectError(await post('agt_missing', { content: 'hi' }), 404, 'AGENT_NOT_FOUND');
    });

    it('an unknown conversation is 404 and the model is not called', async () => {
      expectError(
        await post(plain.id, { conversationId: 'conv_missing', content: 'hi' }),
        404,
        'CONVERSATION_NOT_FOUND',
      );
      expect(chatCalls(bed.ollama)).toHaveLength(0);
    });

    it('a conversation of another agent is refused (404 or 409) and gets no message', async () => {
      const conv = await createConversation(bed, { agentId: grounded.id });
      const res = await post(plain.id, { conversationId: conv.id, content: 'wrong agent' });
      expect([404, 409], res.text).toContain(res.status);
      expectError(res, res.status, res.status === 404 ? 'CONVERSATION_NOT_FOUND' : 'CONFLICT');
      const left = (await call(bed, 'GET', `/api/conversations/${conv.id}`)).json() as {
        messages: Page<Message>;
      };
      expect(left.messages.data).toEqual([]);
      expect(chatCalls(bed.ollama)).toHaveLength(0);
    });

    it('content empty, too long, missing or not a string is 400', async () => {
      expectNamesField(await post(plain.id, { content: '' }), 'content');
      expectNamesField(await post(plain.id, { content: 'x'.repeat(32_001) }), 'content');
      expectNamesField(await post(plain.id, {}), 'content');
      expectNamesField(await post(plain.id, { content: 42 }), 'content');
      expectError(await post(plain.id, { content: 'hi', extra: true }), 400, 'VALIDATION_ERROR');
      expect(chatCalls(bed.ollama)).toHaveLength(0);
      // 32000 characters is still fine.
      const ok = await post(plain.id, { content: 'y'.repeat(32_000) });
      expect(ok.status, ok.text.slice(0, 300)).toBe(200);
    });
  });
});
