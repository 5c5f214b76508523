import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import type { Agent, AgentEvent, Message, Turn } from './support.js';

/**
 * An agent on the default configuration, built-in models only (no upstream at all): its knowledge is a
 * frozen copy of this project's docs; `builtin/extractive` cannot call tools, so the answer is quoted
 * from the passages retrieved for the question, and the steps say the tools were skipped.
 */
const CORPUS = path.join(import.meta.dirname, '..', 'fixtures', 'documents', 'corpus');

describe.each(await testDialects())('agents with built-in models end to end on %s', (dialect) => {
  let p: TestPlatform;
  let agent: Agent;
  const docIds = new Map<string, string>();

  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
    for (const file of readdirSync(CORPUS).sort()) {
      const loaded = await p.request({
        method: 'POST',
        url: '/api/documents/load',
        payload: {
          source: 'markdown',
          content: readFileSync(path.join(CORPUS, file), 'utf8'),
          title: file,
          topic: 'platform-docs',
        },
      });
      expect(loaded.statusCode, loaded.body).toBeLessThan(300);
      const id = (loaded.json() as { id: string }).id;
      const done = await p.request({
        method: 'POST',
        url: `/api/documents/${id}/process?wait=true`,
        payload: {},
      });
      expect(done.statusCode, done.body).toBe(200);
      expect((done.json() as { status: string }).status).toBe('indexed');
      docIds.set(file, id);
    }
    const created = await p.request({
      method: 'POST',
      url: '/api/agents',
      payload: {
        name: 'Docs agent',
        model: 'builtin/extractive',
        instructions: 'Answer from the platform documentation.',
        knowledgeTopics: ['platform-docs'],
        tools: ['knowledge_search'],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    agent = created.json() as Agent;
  }, 60_000);
  afterAll(() => p?.close());

  const ask = (content: string, extra: Record<string, unknown> = {}) =>
    p.request({ method: 'POST', url: `/api/agents/${agent.id}/messages`, payload: { content, ...extra } });

  it('answers a known question by quoting the right document, its first source', async () => {
    const res = await ask('How are fallbacks tried when a model fails before its first byte?');
    expect(res.statusCode, res.body).toBe(200);
    const turn = res.json() as Turn;
    const [user, answer] = turn.messages;
    expect(user).toMatchObject({
      role: 'user',
      content: 'How are fallbacks tried when a model fails before its first byte?',
    });
    expect(answer.role).toBe('assistant');
    expect(turn.sources[0]).toMatchObject({
      documentId: docIds.get('llm.md'),
      title: 'llm.md',
      topic: 'platform-docs',
    });
    expect(answer.content.toLowerCase()).toContain('fallback');
    // Quoted from the passages retrieved for this question.
    const firstQuote = answer.content.split(/(?<=[.!?])\s/)[0] as string;
    expect(
      turn.sources.some((s) => s.text.includes(firstQuote.slice(0, 40))),
      answer.content,
    ).toBe(true);
    expect(answer.sources).toEqual(turn.sources);
  });

  it('the steps show the retrieval and that the tools were skipped', async () => {
    const res = await ask('Is the game manifest cached by its content version?');
    expect(res.statusCode, res.body).toBe(200);
    const answer = (res.json() as Turn).messages[1] as Message;
    expect(answer.content.toLowerCase()).toContain('manifest');
    expect(answer.steps.map((s) => s.type)).toEqual(['retrieval', 'model']);
    const [retrieval, model] = answer.steps;
    expect(JSON.stringify(retrieval?.output)).toContain(docIds.get('game.md') as string);
    expect(model).toMatchObject({
      name: 'builtin/extractive',
      output: expect.objectContaining({ toolsSkipped: true }),
    });
    for (const step of answer.steps) expect(step.ms).toBeGreaterThanOrEqual(0);
    expect(answer.steps.some((s) => s.type === 'tool_call')).toBe(false);
  });

  it('streams the same answer as SSE frames, message.completed last', async () => {
    const question = 'How does a worker claim an execution so only one runs it?';
    const json = (await ask(question)).json() as Turn;
    const res = await ask(question, { stream: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events: AgentEvent[] = res.body
      .trim()
      .split('\n\n')
      .map((frame) => {
        const [head, data] = frame.split('\n');
        return {
          event: head?.replace(/^event: ?/, '') ?? '',
          data: JSON.parse(data?.replace(/^data: ?/, '') ?? ''),
        };
      });
    expect(events[0]?.event).toBe('message.created');
    expect(events.at(-1)?.event).toBe('message.completed');
    const completed = events.at(-1)?.data as { message: Message };
    const deltas = events.filter((e) => e.event === 'message.delta').map((e) => e.data.delta as string);
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.join('')).toBe(completed.message.content);
    // Deterministic: the same question answers the same text.
    expect(completed.message.content).toBe(json.messages[1].content);
  });

  it('a conversation keeps its turns; the next turn is answered from retrieval again', async () => {
    const first = (await ask('What is a webhook node?')).json() as Turn;
    const res = await ask('How are fallbacks tried when a model fails?', {
      conversationId: first.conversationId,
    });
    expect(res.statusCode, res.body).toBe(200);
    const second = res.json() as Turn;
    expect(second.conversationId).toBe(first.conversationId);
    expect(second.sources[0]?.documentId).toBe(docIds.get('llm.md'));
    const list = await p.request({
      method: 'GET',
      url: `/api/agents/${agent.id}/messages?conversationId=${first.conversationId}`,
    });
    expect((list.json() as { data: Message[] }).data.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
  });
});
