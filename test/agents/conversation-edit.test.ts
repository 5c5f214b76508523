/**
 * Issue 35: a conversation exported as one JSON document; a message edited (later turns read the new
 * text) or deleted; both refused while a turn of the conversation waits; a customer token only on its
 * own conversations. On both databases, against the fake OpenAI upstream.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import {
  call,
  chatCalls,
  createAgent,
  customerToken,
  expectError,
  expectNamesField,
  send,
  textOf,
  toolCallsThenText,
} from './support.js';

const MODEL = 'gpt-4o-mini';

describe.each(await testDialects())('agents: conversation export and message edits on %s', (dialect) => {
  let bed: LlmTestbed;
  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
  });
  afterAll(() => bed?.close());
  beforeEach(() => bed.openai.reset());

  it('exports the conversation whole; an edited message is what the next turn reads; a deleted one is gone', async () => {
    const agent = await createAgent(bed, { model: MODEL });
    const turn = await send(bed, agent.id, { content: 'My name is Ada' });
    const id = turn.conversationId;
    const exported = await call(bed, 'GET', `/api/conversations/${id}/export`);
    expect(exported.status, exported.text).toBe(200);
    expect(exported.headers.get('content-disposition')).toContain(`${id}.json`);
    expect(exported.json()).toMatchObject({
      format: 'agent-conversation',
      version: 1,
      conversation: { id, agentId: agent.id },
      messages: [
        { id: turn.messages[0].id, role: 'user', content: 'My name is Ada' },
        { id: turn.messages[1].id, role: 'assistant' },
      ],
      truncated: false,
    });

    const [user, assistant] = turn.messages;
    const edit = await call(bed, 'PATCH', `/api/conversations/${id}/messages/${user.id}`, {
      body: { content: 'My name is Grace' },
    });
    expect(edit.status, edit.text).toBe(200);
    expect(edit.json()).toMatchObject({ id: user.id, content: 'My name is Grace' });
    const deleted = await call(bed, 'DELETE', `/api/conversations/${id}/messages/${assistant.id}`);
    expect(deleted.status, deleted.text).toBe(204);
    await send(bed, agent.id, { content: 'Who am I?', conversationId: id });
    const seen = chatCalls(bed.openai)
      .at(-1)
      ?.messages.map((m) => `${m.role}:${textOf(m.content)}`);
    expect(seen).toEqual(['user:My name is Grace', 'user:Who am I?']);

    expectError(await call(bed, 'DELETE', `/api/conversations/${id}/messages/${assistant.id}`), 404);
    expectNamesField(
      await call(bed, 'PATCH', `/api/conversations/${id}/messages/${user.id}`, { body: { content: '' } }),
      'content',
    );
    expectError(await call(bed, 'GET', '/api/conversations/conv_nope/export'), 404);
  });

  it('refuses edits while a turn waits (409); a customer token edits only its own conversations', async () => {
    const agent = await createAgent(bed, { model: MODEL });
    toolCallsThenText(bed.openai, { name: 'lookup', arguments: {} });
    const res = await call(bed, 'POST', `/api/agents/${agent.id}/messages`, {
      body: { content: 'Look', tools: [{ type: 'function', name: 'lookup' }] },
    });
    const paused = res.json() as { conversationId: string; messages: Array<{ id: string }> };
    const path = `/api/conversations/${paused.conversationId}/messages/${paused.messages[0]?.id}`;
    expectError(await call(bed, 'PATCH', path, { body: { content: 'changed' } }), 409, 'CONFLICT');
    expectError(await call(bed, 'DELETE', path), 409, 'CONFLICT');

    const token = await customerToken(bed, 'cust-edit');
    expectError(
      await call(bed, 'GET', `/api/conversations/${paused.conversationId}/export`, { key: token }),
      404,
    );
    expectError(await call(bed, 'PATCH', path, { key: token, body: { content: 'x' } }), 404);
    const own = await send(bed, agent.id, { content: 'Mine' }, token);
    const ownPath = `/api/conversations/${own.conversationId}/messages/${own.messages[0].id}`;
    const edited = await call(bed, 'PATCH', ownPath, { key: token, body: { content: 'Mine, edited' } });
    expect(edited.status, edited.text).toBe(200);
  });

  it('DELETE …/messages resets a conversation: no history for the next turn, the conversation stays; 409 while a turn waits', async () => {
    const agent = await createAgent(bed, { model: MODEL });
    const first = await send(bed, agent.id, { content: 'My name is Ada' });
    const id = first.conversationId;
    await send(bed, agent.id, { content: 'Remember it', conversationId: id });
    const reset = await call(bed, 'DELETE', `/api/conversations/${id}/messages`);
    expect(reset.status, reset.text).toBe(200);
    expect(reset.json()).toEqual({ deleted: 4 });
    const after = await call(bed, 'GET', `/api/conversations/${id}`);
    expect(after.status, after.text).toBe(200);
    expect((after.json() as { messages: { data: unknown[] } }).messages.data).toEqual([]);
    await send(bed, agent.id, { content: 'Who am I?', conversationId: id });
    const seen = chatCalls(bed.openai)
      .at(-1)
      ?.messages.map((m) => `${m.role}:${textOf(m.content)}`);
    expect(seen).toEqual(['user:Who am I?']);

    // A paused turn's state was built from its messages: no reset under it.
    toolCallsThenText(bed.openai, { name: 'lookup', arguments: {} });
    const res = await call(bed, 'POST', `/api/agents/${agent.id}/messages`, {
      body: { content: 'Look', conversationId: id, tools: [{ type: 'function', name: 'lookup' }] },
    });
    expect(res.status, res.text).toBe(200);
    expectError(await call(bed, 'DELETE', `/api/conversations/${id}/messages`), 409, 'CONFLICT');
    // Another customer's (or an unknown) conversation is a 404.
    const token = await customerToken(bed, 'cust-reset', ['agent:read', 'agent:write', 'agent:delete']);
    expectError(await call(bed, 'DELETE', `/api/conversations/${id}/messages`, { key: token }), 404);
    expectError(await call(bed, 'DELETE', '/api/conversations/conv_nope/messages'), 404);
  });

  it('PATCH /api/conversations/{id} changes title and metadata; bad input 400; another customer 404', async () => {
    const agent = await createAgent(bed, { model: MODEL });
    const created = await call(bed, 'POST', '/api/conversations', {
      body: { agentId: agent.id, userId: 'fay', title: 'Old', metadata: { a: 1 } },
    });
    expect(created.status, created.text).toBe(201);
    const id = (created.json() as { id: string }).id;
    const patched = await call(bed, 'PATCH', `/api/conversations/${id}`, {
      body: { title: 'New title', metadata: { channel: 'web' } },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json()).toMatchObject({ id, title: 'New title', metadata: { channel: 'web' } });
    const got = await call(bed, 'GET', `/api/conversations/${id}`);
    expect(got.json()).toMatchObject({ title: 'New title', metadata: { channel: 'web' } });
    const cleared = await call(bed, 'PATCH', `/api/conversations/${id}`, { body: { title: null } });
    expect(cleared.json()).toMatchObject({ title: null, metadata: { channel: 'web' } });

    expectError(await call(bed, 'PATCH', `/api/conversations/${id}`, { body: {} }), 400, 'VALIDATION_ERROR');
    expectNamesField(await call(bed, 'PATCH', `/api/conversations/${id}`, { body: { title: 7 } }), 'title');
    const own = await customerToken(bed, 'fay');
    const stranger = await customerToken(bed, 'gus');
    expect(
      (await call(bed, 'PATCH', `/api/conversations/${id}`, { key: own, body: { title: 'Mine' } })).status,
    ).toBe(200);
    expectError(
      await call(bed, 'PATCH', `/api/conversations/${id}`, { key: stranger, body: { title: 'x' } }),
      404,
      'CONVERSATION_NOT_FOUND',
    );
  });
});
