/**
 * Issue 35: memory blocks — per agent and per conversation, size-limited, read into every turn,
 * edited by the agent's memory tools and through `/api/agents/{id}/memory/blocks`, with an edit
 * history; on both databases.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { otherAccountKey } from '../helpers/accounts.js';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import {
  call,
  chatCalls,
  createAgent,
  createConversation,
  expectError,
  expectNamesField,
  send,
  textOf,
  toolCallsThenText,
} from './support.js';

interface Block {
  id: string;
  label: string;
  value: string;
  limit: number;
  conversationId: string | null;
  userId: string | null;
}

describe.each(await testDialects())('agents: memory blocks on %s', (dialect) => {
  let bed: LlmTestbed;
  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
  });
  afterAll(() => bed?.close());
  beforeEach(() => bed.openai.reset());

  const blocksPath = (agentId: string) => `/api/agents/${agentId}/memory/blocks`;
  const create = async (agentId: string, body: Record<string, unknown>): Promise<Block> => {
    const res = await call(bed, 'POST', blocksPath(agentId), { body });
    expect(res.status, res.text).toBe(201);
    return res.json() as Block;
  };

  it('CRUD with limits and history; a conversation block shadows the agent block of its label in the prompt', async () => {
    const agent = await createAgent(bed, { model: 'gpt-4o-mini', instructions: 'Be kind.' });
    const conv = await createConversation(bed, { agentId: agent.id });
    const persona = await create(agent.id, { label: 'persona', value: 'I am Sam, a perfumer.', limit: 100 });
    await create(agent.id, { label: 'human', value: 'Unknown yet.' });
    const human = await create(agent.id, {
      label: 'human',
      value: 'Ada, likes vetiver.',
      conversationId: conv.id,
    });
    expect(human.conversationId).toBe(conv.id);

    // Bad input: over its limit, a label taken, a conversation of another agent, a bad label.
    expectNamesField(
      await call(bed, 'POST', blocksPath(agent.id), { body: { label: 'x', value: 'abc', limit: 2 } }),
      'value',
    );
    expectError(
      await call(bed, 'POST', blocksPath(agent.id), { body: { label: 'persona' } }),
      409,
      'NAME_TAKEN',
    );
    expectNamesField(
      await call(bed, 'PATCH', `${blocksPath(agent.id)}/${persona.id}`, { body: { value: 'x'.repeat(101) } }),
      'value',
    );
    expectError(
      await call(bed, 'POST', blocksPath(agent.id), { body: { label: 'a b' } }),
      400,
      'VALIDATION_ERROR',
    );

    const listed = await call(bed, 'GET', `${blocksPath(agent.id)}?conversationId=${conv.id}`);
    expect((listed.json() as { data: Block[] }).data.map((b) => [b.label, b.conversationId])).toEqual([
      ['human', null],
      ['persona', null],
      ['human', conv.id],
    ]);

    const patched = await call(bed, 'PATCH', `${blocksPath(agent.id)}/${persona.id}`, {
      body: { value: 'I am Sam, a master perfumer.' },
    });
    expect(patched.status, patched.text).toBe(200);

    await send(bed, agent.id, { conversationId: conv.id, content: 'Hello' });
    const system = chatCalls(bed.openai)[0]?.system ?? '';
    expect(system).toContain('Be kind.');
    expect(system).toContain('I am Sam, a master perfumer.');
    expect(system).toContain('Ada, likes vetiver.');
    expect(system).not.toContain('Unknown yet.');

    const history = await call(bed, 'GET', `${blocksPath(agent.id)}/${persona.id}/history`);
    expect((history.json() as { data: Array<{ op: string; by: string; after: string }> }).data).toEqual([
      expect.objectContaining({ op: 'update', by: 'api', after: 'I am Sam, a master perfumer.' }),
      expect.objectContaining({ op: 'create', by: 'api', after: 'I am Sam, a perfumer.' }),
    ]);

    const foreign = await otherAccountKey(bed.p);
    expect((await call(bed, 'GET', blocksPath(agent.id), { key: foreign })).status).toBe(404);
    expect((await call(bed, 'DELETE', `${blocksPath(agent.id)}/${persona.id}`)).status).toBe(204);
    expect((await call(bed, 'GET', `${blocksPath(agent.id)}/${persona.id}`)).status).toBe(404);
  });

  it("a user's blocks: read into every conversation of that user, shadowed by a conversation's, edited by the agent", async () => {
    const agent = await createAgent(bed, { model: 'gpt-4o-mini', tools: ['memory_append'] });
    await create(agent.id, { label: 'human', value: 'Unknown yet.' });
    const ada = await create(agent.id, { label: 'human', value: 'Ada, likes vetiver.', userId: 'u-ada' });
    expect(ada).toMatchObject({ userId: 'u-ada', conversationId: null });
    const adaFirst = await createConversation(bed, { agentId: agent.id, userId: 'u-ada' });
    const adaSecond = await createConversation(bed, { agentId: agent.id, userId: 'u-ada' });
    const bob = await createConversation(bed, { agentId: agent.id, userId: 'u-bob' });
    // One scope per block.
    expectNamesField(
      await call(bed, 'POST', blocksPath(agent.id), {
        body: { label: 'x', userId: 'u-ada', conversationId: adaFirst.id },
      }),
      'userId',
    );

    await send(bed, agent.id, { conversationId: adaFirst.id, content: 'Hello' });
    await send(bed, agent.id, { conversationId: bob.id, content: 'Hello' });
    const [forAda, forBob] = chatCalls(bed.openai).map((c) => c.system ?? '');
    expect(forAda).toContain('Ada, likes vetiver.');
    expect(forAda).not.toContain('Unknown yet.');
    expect(forBob).toContain('Unknown yet.');
    expect(forBob).not.toContain('Ada');

    // The agent's edit in another conversation of Ada goes to her block, not the agent's.
    bed.openai.reset();
    toolCallsThenText(bed.openai, {
      name: 'memory_append',
      arguments: { label: 'human', content: 'Prefers amber.' },
    });
    await send(bed, agent.id, { conversationId: adaSecond.id, content: 'I like amber' });
    const listed = await call(bed, 'GET', `${blocksPath(agent.id)}?userId=u-ada`);
    const blocks = (listed.json() as { data: Block[] }).data;
    expect(blocks.map((b) => [b.label, b.userId, b.value])).toEqual([
      ['human', null, 'Unknown yet.'],
      ['human', 'u-ada', 'Ada, likes vetiver.\nPrefers amber.'],
    ]);

    // A conversation's block of the label hides the user's.
    await create(agent.id, {
      label: 'human',
      value: 'Shopping for a gift today.',
      conversationId: adaFirst.id,
    });
    bed.openai.reset();
    await send(bed, agent.id, { conversationId: adaFirst.id, content: 'Again' });
    const system = chatCalls(bed.openai)[0]?.system ?? '';
    expect(system).toContain('Shopping for a gift today.');
    expect(system).not.toContain('Prefers amber.');
  });

  it('the agent edits its memory with memory_append and memory_replace; over the limit the model reads an error', async () => {
    const agent = await createAgent(bed, {
      model: 'gpt-4o-mini',
      tools: ['memory_append', 'memory_replace'],
    });
    const conv = await createConversation(bed, { agentId: agent.id });
    const human = await create(agent.id, {
      label: 'human',
      value: 'Name: Ada.',
      limit: 40,
      conversationId: conv.id,
    });
    toolCallsThenText(
      bed.openai,
      { name: 'memory_append', arguments: { label: 'human', content: 'Likes tea.' } },
      {
        name: 'memory_replace',
        arguments: { label: 'human', old_content: 'tea', new_content: 'x'.repeat(60) },
      },
      { name: 'memory_replace', arguments: { label: 'human', old_content: 'Ada', new_content: 'Ada L.' } },
    );
    await send(bed, agent.id, { conversationId: conv.id, content: 'I like tea' });
    const block = (await call(bed, 'GET', `${blocksPath(agent.id)}/${human.id}`)).json() as Block;
    expect(block.value).toBe('Name: Ada L..\nLikes tea.');
    // The over-limit edit came back to the model as an error; nothing changed.
    const third = chatCalls(bed.openai)[2];
    const results = (third?.messages ?? []).filter((m) => m.role === 'tool').map((m) => textOf(m.content));
    expect(results.at(-1)).toContain('limit is 40');
    const history = (await call(bed, 'GET', `${blocksPath(agent.id)}/${human.id}/history`)).json() as {
      data: Array<{ op: string; by: string }>;
    };
    expect(history.data.map((e) => `${e.op}:${e.by}`)).toEqual([
      'replace:agent',
      'append:agent',
      'create:api',
    ]);
    // The next turn reads the edited block.
    bed.openai.reset();
    await send(bed, agent.id, { conversationId: conv.id, content: 'again' });
    expect(chatCalls(bed.openai)[0]?.system).toContain('Name: Ada L..\nLikes tea.');
  });

  it('exports an agent with its blocks as a JSON file and imports it as a new agent; a bad file is refused whole', async () => {
    const agent = await createAgent(bed, {
      model: 'gpt-4o-mini',
      instructions: 'Be kind.',
      tools: ['memory_append'],
    });
    await create(agent.id, { label: 'persona', value: 'I am Sam.', limit: 100, description: 'who' });
    const exported = await call(bed, 'GET', `/api/agents/${agent.id}/export`);
    expect(exported.status, exported.text).toBe(200);
    expect(exported.headers.get('content-disposition')).toContain('.agent.json');
    const file = exported.json() as Record<string, unknown>;
    expect(file).toMatchObject({
      format: 'agent',
      version: 1,
      agent: { instructions: 'Be kind.', tools: ['memory_append'] },
      memoryBlocks: [{ label: 'persona', value: 'I am Sam.', limit: 100, description: 'who' }],
    });

    const imported = await call(bed, 'POST', '/api/agents/import', { body: file });
    expect(imported.status, imported.text).toBe(201);
    const copy = imported.json() as { id: string; instructions: string };
    expect(copy.id).not.toBe(agent.id);
    expect(copy.instructions).toBe('Be kind.');
    const blocks = (await call(bed, 'GET', blocksPath(copy.id))).json() as { data: Block[] };
    expect(blocks.data.map((b) => [b.label, b.value])).toEqual([['persona', 'I am Sam.']]);

    const before = ((await call(bed, 'GET', '/api/agents')).json() as { data: unknown[] }).data.length;
    expectNamesField(
      await call(bed, 'POST', '/api/agents/import', {
        body: { ...file, memoryBlocks: [{ label: 'x', value: 'abc', limit: 2 }] },
      }),
      'memoryBlocks[0].value',
    );
    expectNamesField(
      await call(bed, 'POST', '/api/agents/import', { body: { ...file, version: 2 } }),
      'version',
    );
    expect(((await call(bed, 'GET', '/api/agents')).json() as { data: unknown[] }).data).toHaveLength(before);
    const foreign = await otherAccountKey(bed.p);
    expect((await call(bed, 'GET', `/api/agents/${agent.id}/export`, { key: foreign })).status).toBe(404);
  });
});
