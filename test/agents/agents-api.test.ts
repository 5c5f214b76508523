import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { createWorkflow, flow as workflowBody } from '../workflows/support.js';
import {
  type Agent,
  type Conversation,
  call,
  createAgent,
  createConversation,
  expectError,
  expectNamesField,
  type Message,
  type Page,
  seedTopic,
  send,
  tick,
} from './support.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe.each(await testDialects())('agents: definitions over HTTP on %s', (dialect) => {
  let bed: LlmTestbed;
  let workflowId: string;
  let noWebhookWorkflowId: string;

  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
    await seedTopic(bed, 'kb');
    workflowId = await createWorkflow(
      bed.p,
      workflowBody('agent tool', [
        {
          name: 'Webhook',
          type: 'webhook',
          parameters: { path: 'agent-tool-api', responseMode: 'lastNode' },
        },
        { name: 'Set', type: 'set', parameters: { values: { ok: true }, keepOnlySet: true } },
      ]),
    );
    noWebhookWorkflowId = await createWorkflow(
      bed.p,
      workflowBody('no webhook', [{ name: 'Set', type: 'set', parameters: { values: { a: 1 } } }]),
    );
  });
  afterAll(() => bed?.close());

  const post = (body: Record<string, unknown>, key?: string) =>
    call(bed, 'POST', '/api/agents', { body, ...(key ? { key } : {}) });

  it('POST makes an agent with the contract’s defaults; GET answers the same', async () => {
    const created = await createAgent(bed, { name: 'helper', model: 'llama3.2' });
    expect(created).toEqual({
      id: expect.any(String),
      name: 'helper',
      instructions: '',
      model: 'llama3.2',
      knowledgeTopics: [],
      tools: [],
      temperature: null,
      maxToolCalls: 4,
      requiresApproval: [],
      approvalTimeoutSeconds: null,
      approvalTimeouts: {},
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    const got = await call(bed, 'GET', `/api/agents/${created.id}`);
    expect(got.status, got.text).toBe(200);
    expect(got.json()).toEqual(created);
  });

  it('POST keeps every field: topics, string and object tools, temperature, maxToolCalls', async () => {
    const tools = [
      'knowledge_search',
      'user_profile',
      'blend_recommendations',
      {
        name: `workflow:${workflowId}`,
        description: 'Looks up an order',
        parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
      },
    ];
    const created = await createAgent(bed, {
      name: 'full',
      instructions: 'Be kind.',
      model: 'gpt-4o-mini',
      knowledgeTopics: ['kb'],
      tools,
      temperature: 0.3,
      maxToolCalls: 0,
    });
    expect(created).toMatchObject({
      name: 'full',
      instructions: 'Be kind.',
      model: 'gpt-4o-mini',
      knowledgeTopics: ['kb'],
      tools,
      temperature: 0.3,
      maxToolCalls: 0,
    });
    // A workflow tool by its plain name is accepted too.
    const plain = await createAgent(bed, { model: 'llama3.2', tools: [`workflow:${workflowId}`] });
    expect(plain.tools).toEqual([`workflow:${workflowId}`]);
  });

  it('PATCH changes only the fields sent and moves updatedAt', async () => {
    const created = await createAgent(bed, {
      name: 'before',
      instructions: 'Keep me',
      model: 'llama3.2',
      knowledgeTopics: ['kb'],
      tools: ['knowledge_search'],
      temperature: 0.5,
    });
    await tick(bed);
    const res = await call(bed, 'PATCH', `/api/agents/${created.id}`, {
      body: { name: 'after', maxToolCalls: 2 },
    });
    expect(res.status, res.text).toBe(200);
    const patched = res.json() as Agent;
    expect(patched).toEqual({
      ...created,
      name: 'after',
      maxToolCalls: 2,
      updatedAt: expect.stringMatching(ISO),
    });
    expect(patched.updatedAt > created.updatedAt).toBe(true);
    expect((await call(bed, 'GET', `/api/agents/${created.id}`)).json()).toEqual(patched);
    // temperature back to null.
    const cleared = await call(bed, 'PATCH', `/api/agents/${created.id}`, { body: { temperature: null } });
    expect(cleared.status, cleared.text).toBe(200);
    expect((cleared.json() as Agent).temperature).toBeNull();
  });

  it('PATCH checks the merged agent: dropping the topics of a knowledge_search agent is a 400, nothing changes', async () => {
    const created = await createAgent(bed, {
      model: 'llama3.2',
      knowledgeTopics: ['kb'],
      tools: ['knowledge_search'],
    });
    expectNamesField(
      await call(bed, 'PATCH', `/api/agents/${created.id}`, { body: { knowledgeTopics: [] } }),
      'knowledge',
    );
    expect(((await call(bed, 'GET', `/api/agents/${created.id}`)).json() as Agent).knowledgeTopics).toEqual([
      'kb',
    ]);
  });

  it('DELETE answers 204, then the agent is 404 everywhere', async () => {
    const created = await createAgent(bed, { model: 'llama3.2' });
    const del = await call(bed, 'DELETE', `/api/agents/${created.id}`);
    expect(del.status, del.text).toBe(204);
    expect(del.text).toBe('');
    expectError(await call(bed, 'GET', `/api/agents/${created.id}`), 404, 'AGENT_NOT_FOUND');
    expectError(await call(bed, 'PATCH', `/api/agents/${created.id}`, { body: { name: 'x' } }), 404);
    expectError(await call(bed, 'DELETE', `/api/agents/${created.id}`), 404);
    expectError(
      await call(bed, 'POST', `/api/agents/${created.id}/messages`, { body: { content: 'hi' } }),
      404,
    );
  });

  it('unknown agents are 404 with the platform error body', async () => {
    expectError(await call(bed, 'GET', '/api/agents/agt_missing'), 404, 'AGENT_NOT_FOUND');
    expectError(
      await call(bed, 'PATCH', '/api/agents/agt_missing', { body: { name: 'x' } }),
      404,
      'AGENT_NOT_FOUND',
    );
    expectError(await call(bed, 'DELETE', '/api/agents/agt_missing'), 404, 'AGENT_NOT_FOUND');
  });

  it('GET /api/agents lists in the {data, nextCursor} envelope and pages with limit and cursor', async () => {
    const made: string[] = [];
    for (let i = 0; i < 3; i++)
      made.push((await createAgent(bed, { name: `page-${i}`, model: 'llama3.2' })).id);
    const all: Agent[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await call(bed, 'GET', `/api/agents?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status, res.text).toBe(200);
      const page = res.json() as Page<Agent>;
      expect(Object.keys(page).sort()).toEqual(['data', 'nextCursor']);
      expect(page.data.length).toBeLessThanOrEqual(2);
      all.push(...page.data);
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor && pages < 50);
    expect(pages).toBeGreaterThan(1);
    const ids = all.map((a) => a.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of made) expect(ids).toContain(id);
    expect(all.find((a) => a.id === made[0])).toMatchObject({ name: 'page-0', model: 'llama3.2' });
  });

  describe('save-time 400s name the field', () => {
    it('an unknown model', async () => {
      expectNamesField(await post({ name: 'x', model: 'no-such-model' }), 'model');
    });

    it('a model that is not a chat model (an embedding model)', async () => {
      expectNamesField(await post({ name: 'x', model: 'nomic-embed-text' }), 'model');
    });

    it('a topic with no documents', async () => {
      expectNamesField(
        await post({ name: 'x', model: 'llama3.2', knowledgeTopics: ['empty-topic'] }),
        'knowledgeTopics',
      );
    });

    it('an unknown tool name', async () => {
      expectNamesField(await post({ name: 'x', model: 'llama3.2', tools: ['web_search'] }), 'tools');
    });

    it('an unknown workflow', async () => {
      expectNamesField(await post({ name: 'x', model: 'llama3.2', tools: ['workflow:wf_missing'] }), 'tools');
      expectNamesField(
        await post({
          name: 'x',
          model: 'llama3.2',
          tools: [{ name: 'workflow:wf_missing', description: 'd' }],
        }),
        'tools',
      );
    });

    it('a workflow without a webhook node', async () => {
      expectNamesField(
        await post({ name: 'x', model: 'llama3.2', tools: [`workflow:${noWebhookWorkflowId}`] }),
        'tools',
      );
    });

    it('knowledge_search without topics', async () => {
      expectNamesField(
        await post({ name: 'x', model: 'llama3.2', tools: ['knowledge_search'] }),
        'knowledge',
      );
    });

    it('a workflow tool whose parameters are not an object schema', async () => {
      expectNamesField(
        await post({
          name: 'x',
          model: 'llama3.2',
          tools: [{ name: `workflow:${workflowId}`, parameters: { type: 'string' } }],
        }),
        'parameters',
      );
    });

    it('out-of-range numbers, missing fields and unknown fields', async () => {
      expectNamesField(await post({ name: 'x', model: 'llama3.2', maxToolCalls: 11 }), 'maxToolCalls');
      expectNamesField(await post({ name: 'x', model: 'llama3.2', maxToolCalls: -1 }), 'maxToolCalls');
      expectNamesField(await post({ name: 'x', model: 'llama3.2', temperature: 5 }), 'temperature');
      expectNamesField(await post({ name: 'x' }), 'model');
      expectNamesField(await post({ model: 'llama3.2' }), 'name');
      expectError(await post({ name: 'x', model: 'llama3.2', colour: 'red' }), 400, 'VALIDATION_ERROR');
      expectError(await call(bed, 'POST', '/api/agents', { body: '{"name":' }), 400);
    });

    it('nothing was stored by a refused save', async () => {
      await post({ name: 'refused-agent', model: 'no-such-model' });
      const list = (await call(bed, 'GET', '/api/agents?limit=200')).json() as Page<Agent>;
      expect(list.data.map((a) => a.name)).not.toContain('refused-agent');
    });
  });

  it('a key limited to some models may not save an agent on another one (403)', async () => {
    const { key } = await bed.p.createKey({
      name: 'limited',
      type: 'development',
      services: ['agent'],
      role: 'Writer',
      models: ['gpt-4o-mini'],
    });
    expectError(await post({ name: 'x', model: 'llama3.2' }, key), 403, 'FORBIDDEN');
    const ok = await post({ name: 'x', model: 'gpt-4o-mini' }, key);
    expect(ok.status, ok.text).toBe(201);
    // Nor move it there by PATCH.
    const id = (ok.json() as Agent).id;
    expectError(
      await call(bed, 'PATCH', `/api/agents/${id}`, { body: { model: 'llama3.2' }, key }),
      403,
      'FORBIDDEN',
    );
  });
});

describe.each(await testDialects())('agents: conversations over HTTP on %s', (dialect) => {
  let bed: LlmTestbed;
  let agent: Agent;
  let other: Agent;

  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
    agent = await createAgent(bed, { name: 'conv', model: 'llama3.2' });
    other = await createAgent(bed, { name: 'conv-other', model: 'llama3.2' });
  });
  afterAll(() => bed?.close());

  it('POST /api/conversations → 201 with the contract’s fields; GET answers it with an empty message page', async () => {
    const created = await createConversation(bed, {
      agentId: agent.id,
      userId: 'user-1',
      title: 'Returns',
      metadata: { channel: 'web' },
    });
    expect(created).toEqual({
      id: expect.any(String),
      agentId: agent.id,
      userId: 'user-1',
      title: 'Returns',
      metadata: { channel: 'web' },
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    const got = await call(bed, 'GET', `/api/conversations/${created.id}`);
    expect(got.status, got.text).toBe(200);
    expect(got.json()).toMatchObject({
      ...created,
      updatedAt: expect.any(String),
      messages: { data: [], nextCursor: null },
    });
    // Optional fields default to null / {}.
    const bare = await createConversation(bed, { agentId: agent.id });
    expect(bare).toMatchObject({ agentId: agent.id, userId: null, title: null, metadata: {} });
  });

  it('POST with an unknown agent is 404; without agentId 400', async () => {
    expectError(await call(bed, 'POST', '/api/conversations', { body: { agentId: 'agt_missing' } }), 404);
    expectError(
      await call(bed, 'POST', '/api/conversations', { body: { title: 'x' } }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('GET /api/conversations lists newest first, filters by agentId and userId, pages', async () => {
    const made: Conversation[] = [];
    for (const [a, u] of [
      [agent.id, 'list-a'],
      [agent.id, 'list-b'],
      [other.id, 'list-a'],
    ] as const) {
      await tick(bed);
      made.push(await createConversation(bed, { agentId: a, userId: u }));
    }
    const byUser = (await call(bed, 'GET', '/api/conversations?userId=list-a')).json() as Page<Conversation>;
    expect(byUser.data.map((c) => c.id)).toEqual([made[2]?.id, made[0]?.id]);
    expect(byUser.nextCursor).toBeNull();
    const both = (
      await call(bed, 'GET', `/api/conversations?userId=list-a&agentId=${agent.id}`)
    ).json() as Page<Conversation>;
    expect(both.data.map((c) => c.id)).toEqual([made[0]?.id]);
    const byAgent = (
      await call(bed, 'GET', `/api/conversations?agentId=${other.id}`)
    ).json() as Page<Conversation>;
    expect(byAgent.data.map((c) => c.id)).toEqual([made[2]?.id]);

    const first = (await call(bed, 'GET', '/api/conversations?limit=2')).json() as Page<Conversation>;
    expect(first.data).toHaveLength(2);
    expect(first.nextCursor).toEqual(expect.any(String));
    // Newest first.
    expect(first.data[0]?.id).toBe(made[2]?.id);
    const second = (
      await call(bed, 'GET', `/api/conversations?limit=2&cursor=${first.nextCursor}`)
    ).json() as Page<Conversation>;
    const ids = [...first.data, ...second.data].map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain(made[0]?.id);
  });

  it('DELETE → 204, then 404; its messages are gone too', async () => {
    const turn = await send(bed, agent.id, { content: 'remember me' });
    const id = turn.conversationId;
    const del = await call(bed, 'DELETE', `/api/conversations/${id}`);
    expect(del.status, del.text).toBe(204);
    expectError(await call(bed, 'GET', `/api/conversations/${id}`), 404, 'CONVERSATION_NOT_FOUND');
    expectError(await call(bed, 'DELETE', `/api/conversations/${id}`), 404);
    expectError(await call(bed, 'GET', `/api/agents/${agent.id}/messages?conversationId=${id}`), 404);
    const left = await bed.p.ctx.db
      .selectFrom('agent_messages')
      .select('id')
      .where('conversation_id', '=', id)
      .execute();
    expect(left).toEqual([]);
  });

  it('GET /api/conversations/{id} pages its messages oldest first', async () => {
    const first = await send(bed, agent.id, { content: 'one' });
    await send(bed, agent.id, { conversationId: first.conversationId, content: 'two' });
    const res = await call(bed, 'GET', `/api/conversations/${first.conversationId}?limit=3`);
    expect(res.status, res.text).toBe(200);
    const detail = res.json() as Conversation & { messages: Page<Message> };
    expect(detail.messages.data.map((m) => [m.role, m.content])).toEqual([
      ['user', 'one'],
      ['assistant', 'Echo: one'],
      ['user', 'two'],
    ]);
    expect(detail.messages.nextCursor).toEqual(expect.any(String));
    const rest = (
      await call(
        bed,
        'GET',
        `/api/conversations/${first.conversationId}?limit=3&cursor=${detail.messages.nextCursor}`,
      )
    ).json() as { messages: Page<Message> };
    expect(rest.messages.data.map((m) => m.content)).toEqual(['Echo: two']);
    expect(rest.messages.nextCursor).toBeNull();
  });

  it('unknown conversations are 404', async () => {
    expectError(await call(bed, 'GET', '/api/conversations/conv_missing'), 404, 'CONVERSATION_NOT_FOUND');
    expectError(await call(bed, 'DELETE', '/api/conversations/conv_missing'), 404, 'CONVERSATION_NOT_FOUND');
  });
});
