import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { otherAccountKey } from '../helpers/accounts.js';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import {
  type Agent,
  type Conversation,
  call,
  createAgent,
  createConversation,
  customerToken,
  expectError,
  type Message,
  type Page,
  send,
  toolCallsThenText,
} from './support.js';

describe.each(await testDialects())('agents: access on %s', (dialect) => {
  let bed: LlmTestbed;
  let agent: Agent;
  let alice: string;
  let bob: string;
  /** A conversation of bob's, made with the key. */
  let bobs: Conversation;

  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
    agent = await createAgent(bed, { name: 'shop assistant', model: 'llama3.2' });
    alice = await customerToken(bed, 'alice');
    bob = await customerToken(bed, 'bob');
    bobs = await createConversation(bed, { agentId: agent.id, userId: 'bob', title: 'bob only' });
    await send(bed, agent.id, { conversationId: bobs.id, content: 'a secret of bob' });
  });
  afterAll(() => bed?.close());
  beforeEach(() => {
    bed.ollama.reset();
  });

  describe('customer tokens', () => {
    it('post messages: a new conversation is theirs (userId = customerId)', async () => {
      const turn = await send(bed, agent.id, { content: 'hello from alice' }, alice);
      expect(turn.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
      const conv = await call(bed, 'GET', `/api/conversations/${turn.conversationId}`);
      expect(conv.json()).toMatchObject({ agentId: agent.id, userId: 'alice' });
      // And they continue it, and read it.
      const next = await send(
        bed,
        agent.id,
        { conversationId: turn.conversationId, content: 'again' },
        alice,
      );
      expect(next.conversationId).toBe(turn.conversationId);
      const own = await call(bed, 'GET', `/api/conversations/${turn.conversationId}`, { key: alice });
      expect(own.status, own.text).toBe(200);
      expect((own.json() as { messages: Page<Message> }).messages.data).toHaveLength(4);
      const messages = await call(
        bed,
        'GET',
        `/api/agents/${agent.id}/messages?conversationId=${turn.conversationId}`,
        {
          key: alice,
        },
      );
      expect(messages.status, messages.text).toBe(200);
    });

    it('stream a turn into their own conversation', async () => {
      const res = await call(bed, 'POST', `/api/agents/${agent.id}/messages`, {
        body: { content: 'stream for alice', stream: true },
        key: alice,
      });
      expect(res.status, res.text).toBe(200);
      expect(res.text).toContain('event: message.completed');
    });

    it('the user_profile tool reads the customer’s own profile', async () => {
      const created = await call(bed, 'POST', '/api/users', {
        body: {
          userId: 'alice',
          email: 'alice@example.com',
          name: 'Alice Liddell',
          registrationSource: 'web',
        },
      });
      expect([200, 201], created.text).toContain(created.status);
      const profiled = await createAgent(bed, { model: 'llama3.2', tools: ['user_profile'] });
      toolCallsThenText(bed.ollama, { name: 'user_profile', arguments: {} });
      const turn = await send(bed, profiled.id, { content: 'who am I?' }, alice);
      const step = turn.messages[1].steps.find((s) => s.type === 'tool_call');
      expect(JSON.stringify(step?.output)).toContain('alice@example.com');
    });

    it('POST /api/conversations forces userId to the customer; another userId is 403', async () => {
      const own = await createConversation(bed, { agentId: agent.id, title: 'mine' }, alice);
      expect(own.userId).toBe('alice');
      const same = await createConversation(bed, { agentId: agent.id, userId: 'alice' }, alice);
      expect(same.userId).toBe('alice');
      expectError(
        await call(bed, 'POST', '/api/conversations', {
          body: { agentId: agent.id, userId: 'bob' },
          key: alice,
        }),
        403,
        'FORBIDDEN',
      );
    });

    it('list only their own conversations, whatever the filters', async () => {
      await createConversation(bed, { agentId: agent.id }, alice);
      for (const url of [
        '/api/conversations',
        '/api/conversations?userId=bob',
        `/api/conversations?agentId=${agent.id}`,
      ]) {
        const res = await call(bed, 'GET', url, { key: alice });
        if (res.status === 403) continue; // Refusing a filter on another user is fine too.
        expect(res.status, res.text).toBe(200);
        const page = res.json() as Page<Conversation>;
        expect(
          page.data.every((c) => c.userId === 'alice'),
          `${url}: ${res.text}`,
        ).toBe(true);
        expect(page.data.map((c) => c.id)).not.toContain(bobs.id);
      }
      const mine = (
        await call(bed, 'GET', '/api/conversations', { key: alice })
      ).json() as Page<Conversation>;
      expect(mine.data.length).toBeGreaterThan(0);
      // The key sees everyone's.
      const all = (await call(bed, 'GET', '/api/conversations?limit=200')).json() as Page<Conversation>;
      expect(all.data.map((c) => c.id)).toContain(bobs.id);
    });

    it('another customer’s conversation is 404 everywhere (no existence leak) and stays untouched', async () => {
      expectError(await call(bed, 'GET', `/api/conversations/${bobs.id}`, { key: alice }), 404);
      expectError(
        await call(bed, 'GET', `/api/agents/${agent.id}/messages?conversationId=${bobs.id}`, { key: alice }),
        404,
      );
      expectError(
        await call(bed, 'POST', `/api/agents/${agent.id}/messages`, {
          body: { conversationId: bobs.id, content: 'let me in' },
          key: alice,
        }),
        404,
      );
      // Deleting needs agent:delete (scopes as everywhere); with it, bob's conversation is still a 404.
      const deleter = await customerToken(bed, 'alice', ['agent:read', 'agent:write', 'agent:delete']);
      expectError(await call(bed, 'DELETE', `/api/conversations/${bobs.id}`, { key: deleter }), 404);
      const still = (await call(bed, 'GET', `/api/conversations/${bobs.id}`, { key: bob })).json() as {
        messages: Page<Message>;
      };
      expect(still.messages.data.map((m) => m.content)).toEqual(['a secret of bob', 'Echo: a secret of bob']);
    });

    it('a conversation the key made without a user is not theirs either (404)', async () => {
      const keyOnly = await createConversation(bed, { agentId: agent.id });
      expectError(await call(bed, 'GET', `/api/conversations/${keyOnly.id}`, { key: alice }), 404);
    });

    it('delete their own conversation with agent:delete (204); without it 403', async () => {
      const own = await createConversation(bed, { agentId: agent.id }, alice);
      expectError(
        await call(bed, 'DELETE', `/api/conversations/${own.id}`, { key: alice }),
        403,
        'FORBIDDEN',
      );
      const deleter = await customerToken(bed, 'alice', ['agent:read', 'agent:write', 'agent:delete']);
      const res = await call(bed, 'DELETE', `/api/conversations/${own.id}`, { key: deleter });
      expect(res.status, res.text).toBe(204);
      expectError(await call(bed, 'GET', `/api/conversations/${own.id}`), 404);
    });

    it('may not manage agents (403), not even read them', async () => {
      expectError(
        await call(bed, 'POST', '/api/agents', { body: { name: 'x', model: 'llama3.2' }, key: alice }),
        403,
        'FORBIDDEN',
      );
      expectError(
        await call(bed, 'PATCH', `/api/agents/${agent.id}`, { body: { name: 'pwned' }, key: alice }),
        403,
        'FORBIDDEN',
      );
      expectError(await call(bed, 'DELETE', `/api/agents/${agent.id}`, { key: alice }), 403, 'FORBIDDEN');
      expectError(await call(bed, 'GET', '/api/agents', { key: alice }), 403, 'FORBIDDEN');
      expectError(await call(bed, 'GET', `/api/agents/${agent.id}`, { key: alice }), 403, 'FORBIDDEN');
      expect(((await call(bed, 'GET', `/api/agents/${agent.id}`)).json() as Agent).name).toBe(
        'shop assistant',
      );
    });

    it('need agent:write to post and agent:read to read', async () => {
      const readOnly = await customerToken(bed, 'alice', ['agent:read']);
      const writeOnly = await customerToken(bed, 'alice', ['agent:write']);
      expectError(
        await call(bed, 'POST', `/api/agents/${agent.id}/messages`, {
          body: { content: 'hi' },
          key: readOnly,
        }),
        403,
        'FORBIDDEN',
      );
      expectError(await call(bed, 'GET', '/api/conversations', { key: writeOnly }), 403, 'FORBIDDEN');
      expect((await call(bed, 'GET', '/api/conversations', { key: readOnly })).status).toBe(200);
      const otherService = await customerToken(bed, 'alice', ['flow:read']);
      expectError(await call(bed, 'GET', '/api/conversations', { key: otherService }), 403, 'FORBIDDEN');
    });
  });

  describe('API keys', () => {
    it('another account’s key sees nothing: its agents and conversations are 404, lists empty', async () => {
      const foreign = await otherAccountKey(bed.p);
      expectError(
        await call(bed, 'GET', `/api/agents/${agent.id}`, { key: foreign }),
        404,
        'AGENT_NOT_FOUND',
      );
      expectError(
        await call(bed, 'PATCH', `/api/agents/${agent.id}`, { body: { name: 'x' }, key: foreign }),
        404,
      );
      expectError(await call(bed, 'DELETE', `/api/agents/${agent.id}`, { key: foreign }), 404);
      expectError(
        await call(bed, 'POST', `/api/agents/${agent.id}/messages`, {
          body: { content: 'hi' },
          key: foreign,
        }),
        404,
      );
      expectError(await call(bed, 'GET', `/api/conversations/${bobs.id}`, { key: foreign }), 404);
      expectError(await call(bed, 'DELETE', `/api/conversations/${bobs.id}`, { key: foreign }), 404);
      expectError(
        await call(bed, 'POST', '/api/conversations', { body: { agentId: agent.id }, key: foreign }),
        404,
      );
      const agents = (await call(bed, 'GET', '/api/agents', { key: foreign })).json() as Page<Agent>;
      expect(agents.data).toEqual([]);
      const conversations = (
        await call(bed, 'GET', '/api/conversations', { key: foreign })
      ).json() as Page<Conversation>;
      expect(conversations.data).toEqual([]);
      expect(bed.ollama.requests).toHaveLength(0);
    });

    it('a Reader key reads but cannot POST, PATCH or DELETE', async () => {
      const { key } = await bed.p.createKey({
        name: 'reader',
        type: 'development',
        services: ['agent'],
        role: 'Reader',
      });
      expect((await call(bed, 'GET', '/api/agents', { key })).status).toBe(200);
      expect((await call(bed, 'GET', `/api/agents/${agent.id}`, { key })).status).toBe(200);
      expect((await call(bed, 'GET', `/api/conversations/${bobs.id}`, { key })).status).toBe(200);
      expectError(
        await call(bed, 'POST', '/api/agents', { body: { name: 'x', model: 'llama3.2' }, key }),
        403,
        'FORBIDDEN',
      );
      expectError(
        await call(bed, 'PATCH', `/api/agents/${agent.id}`, { body: { name: 'x' }, key }),
        403,
        'FORBIDDEN',
      );
      expectError(
        await call(bed, 'POST', `/api/agents/${agent.id}/messages`, { body: { content: 'hi' }, key }),
        403,
        'FORBIDDEN',
      );
      expectError(
        await call(bed, 'POST', '/api/conversations', { body: { agentId: agent.id }, key }),
        403,
        'FORBIDDEN',
      );
      expectError(await call(bed, 'DELETE', `/api/conversations/${bobs.id}`, { key }), 403, 'FORBIDDEN');
      expect(bed.ollama.requests).toHaveLength(0);
    });

    it('a Writer key posts but cannot DELETE', async () => {
      const { key } = await bed.p.createKey({
        name: 'writer',
        type: 'development',
        services: ['agent'],
        role: 'Writer',
      });
      const made = await createAgent(bed, { model: 'llama3.2' }, key);
      await send(bed, made.id, { content: 'writer says hi' }, key);
      expectError(await call(bed, 'DELETE', `/api/agents/${made.id}`, { key }), 403, 'FORBIDDEN');
      expect((await call(bed, 'DELETE', `/api/agents/${made.id}`)).status).toBe(204);
    });

    it('a key of another service is 403 on every route', async () => {
      const { key } = await bed.p.createKey({
        name: 'flows only',
        type: 'development',
        services: ['flow'],
        role: 'Admin',
      });
      const routes: Array<[string, string, unknown?]> = [
        ['GET', '/api/agents'],
        ['POST', '/api/agents', { name: 'x', model: 'llama3.2' }],
        ['GET', `/api/agents/${agent.id}`],
        ['POST', `/api/agents/${agent.id}/messages`, { content: 'hi' }],
        ['GET', '/api/conversations'],
        ['GET', `/api/conversations/${bobs.id}`],
        ['DELETE', `/api/conversations/${bobs.id}`],
      ];
      for (const [method, url, body] of routes)
        expectError(await call(bed, method, url, { key, ...(body ? { body } : {}) }), 403, 'FORBIDDEN');
    });

    it('no credential is 401', async () => {
      expectError(await call(bed, 'GET', '/api/agents', { key: null }), 401, 'UNAUTHORIZED');
      expectError(
        await call(bed, 'POST', `/api/agents/${agent.id}/messages`, { body: { content: 'hi' }, key: null }),
        401,
        'UNAUTHORIZED',
      );
      expectError(await call(bed, 'GET', '/api/conversations', { key: 'not-a-key' }), 401, 'UNAUTHORIZED');
    });
  });
});
