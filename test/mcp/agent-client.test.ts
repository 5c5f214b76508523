import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type Agent,
  call,
  chatCalls,
  createAgent,
  expectError,
  type Message,
  send,
  toolCallsThenText,
} from '../agents/support.js';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { startShop, startSilent, UPSTREAM_TOKEN, type Upstream } from './upstream.js';

const CLIENT_TIMEOUT_MS = 1_500;

const shopTool = (url: string, value: string | null = UPSTREAM_TOKEN) => ({
  type: 'mcp',
  name: 'mcp:shop',
  url,
  credential: { header: 'x-mcp-token', ...(value !== null ? { value } : {}) },
});

/** The tool steps of an answer: name and output. */
const toolSteps = (message: Message) =>
  message.steps
    .filter((s) => s.type === 'tool_call')
    .map((s) => ({ name: s.name, output: s.output as Record<string, unknown> }));

describe.each(await testDialects())('agents with MCP server tools on %s', (dialect) => {
  let bed: LlmTestbed;
  let shop: Upstream;
  let silent: Upstream;
  let agent: Agent;

  beforeAll(async () => {
    shop = await startShop();
    silent = await startSilent();
    bed = await startLlmTestbed(
      dialect,
      {
        // Loopback is private: only these two servers are let through the outbound guard.
        OUTBOUND_ALLOW_HOSTS: `127.0.0.1:${shop.port},127.0.0.1:${silent.port}`,
        MCP_CLIENT_TIMEOUT_MS: String(CLIENT_TIMEOUT_MS),
        MCP_CLIENT_MAX_RESPONSE_BYTES: String(256 * 1024),
      },
      { timeoutMs: 30_000 },
    );
    agent = await createAgent(bed, { name: 'shop helper', model: 'llama3.2', tools: [shopTool(shop.url)] });
  });
  afterAll(async () => {
    await bed?.close();
    await shop?.close();
    await silent?.close();
  });
  beforeEach(() => {
    bed.ollama.reset();
  });

  it("saving lists the server's tools; the view shows them and the credential's header, never its value", async () => {
    const view = agent.tools[0] as Record<string, unknown>;
    expect(view).toMatchObject({
      type: 'mcp',
      name: 'mcp:shop',
      url: shop.url,
      credential: { header: 'x-mcp-token' },
    });
    expect((view.tools as Array<{ name: string }>).map((t) => t.name).sort()).toEqual([
      'big',
      'fails',
      'garbage',
      'lookup_order',
      'slow',
    ]);
    const got = await call(bed, 'GET', `/api/agents/${agent.id}`);
    expect(got.text).not.toContain(UPSTREAM_TOKEN);
    // Encrypted at rest.
    const rows = await sql<{
      definition: string;
    }>`select definition from agents where id = ${agent.id}`.execute(bed.p.ctx.db);
    expect(rows.rows[0]?.definition).toContain('"sealed"');
    expect(rows.rows[0]?.definition).not.toContain(UPSTREAM_TOKEN);
  });

  it('the model calls an MCP tool: it runs on the server with the credential, its answer is the result', async () => {
    toolCallsThenText(bed.ollama, { name: 'shop_lookup_order', arguments: { orderId: 'A-17' } });
    const turn = await send(bed, agent.id, { content: 'where is my order A-17?' });
    const steps = toolSteps(turn.messages[1]);
    expect(steps).toEqual([
      { name: 'mcp:shop/lookup_order', output: { orderId: 'A-17', status: 'shipped' } },
    ]);
    expect(shop.calls.at(-1)).toMatchObject({
      name: 'lookup_order',
      arguments: { orderId: 'A-17' },
      token: UPSTREAM_TOKEN,
    });
    const offered = chatCalls(bed.ollama)[0]?.tools.find((t) => t.name === 'shop_lookup_order');
    expect(offered?.description).toBe('Looks up an order by its id');
    // The second model call reads the tool's answer.
    expect(JSON.stringify(chatCalls(bed.ollama)[1]?.messages)).toContain('shipped');
  });

  it("the server's tool error is the tool result the model reads", async () => {
    toolCallsThenText(bed.ollama, { name: 'shop_fails', arguments: {} });
    const turn = await send(bed, agent.id, { content: 'try the warehouse' });
    expect(toolSteps(turn.messages[1])[0]?.output).toEqual({ error: 'the warehouse is closed' });
  });

  it('a tool that hangs: a bounded, clear tool error, and the turn still answers', async () => {
    toolCallsThenText(bed.ollama, { name: 'shop_slow', arguments: {} });
    const started = Date.now();
    const turn = await send(bed, agent.id, { content: 'take your time' });
    expect(String(toolSteps(turn.messages[1])[0]?.output.error)).toMatch(
      `did not answer within ${CLIENT_TIMEOUT_MS} ms`,
    );
    expect(Date.now() - started).toBeLessThan(CLIENT_TIMEOUT_MS + 10_000);
    expect(turn.messages[1].content).not.toBe('');
  });

  it('garbage on the wire and an oversized answer are clear tool errors', async () => {
    toolCallsThenText(bed.ollama, [
      { name: 'shop_garbage', arguments: {} },
      { name: 'shop_big', arguments: {} },
    ]);
    const turn = await send(bed, agent.id, { content: 'two tools' });
    const [garbage, big] = toolSteps(turn.messages[1]);
    expect(String(garbage?.output.error)).toMatch(/^the MCP server at .* failed/);
    expect(String(big?.output.error)).toMatch(/larger than 262144 bytes/);
  });

  it('arguments that break the tool schema never reach the server', async () => {
    const before = shop.calls.length;
    toolCallsThenText(bed.ollama, { name: 'shop_lookup_order', arguments: { order: 5 } });
    const turn = await send(bed, agent.id, { content: 'bad arguments' });
    expect(String(toolSteps(turn.messages[1])[0]?.output.error)).toMatch(/invalid arguments/);
    expect(shop.calls.length).toBe(before);
  });

  it('a server that never answers, a private address, a wrong credential: 400s naming the tool', async () => {
    const hanging = await call(bed, 'POST', '/api/agents', {
      body: { name: 'x', model: 'llama3.2', tools: [{ type: 'mcp', name: 'mcp:silent', url: silent.url }] },
    });
    const body = expectError(hanging, 400, 'VALIDATION_ERROR');
    expect(JSON.stringify(body.details)).toMatch(`did not answer within ${CLIENT_TIMEOUT_MS} ms`);
    expect(JSON.stringify(body.details)).toContain('tools[0]');

    const privateHost = await call(bed, 'POST', '/api/agents', {
      body: { name: 'x', model: 'llama3.2', tools: [shopTool(shop.url.replace('127.0.0.1', 'localhost'))] },
    });
    expect(JSON.stringify(expectError(privateHost, 400).details)).toMatch(/private or internal addresses/);

    const wrong = await call(bed, 'POST', '/api/agents', {
      body: { name: 'x', model: 'llama3.2', tools: [shopTool(shop.url, 'not-the-token')] },
    });
    expect(JSON.stringify(expectError(wrong, 400).details)).toMatch(/HTTP 401/);

    const noValue = await call(bed, 'POST', '/api/agents', {
      body: { name: 'x', model: 'llama3.2', tools: [shopTool(shop.url, null)] },
    });
    expect(JSON.stringify(expectError(noValue, 400).details)).toContain('credential.value');

    const unknownTool = await call(bed, 'POST', '/api/agents', {
      body: { name: 'x', model: 'llama3.2', tools: [{ ...shopTool(shop.url), include: ['nope'] }] },
    });
    expect(JSON.stringify(expectError(unknownTool, 400).details)).toContain("no tool 'nope'");
  });

  it('a PATCH that re-sends the tool without the value keeps the stored credential, and include narrows', async () => {
    const patched = await call(bed, 'PATCH', `/api/agents/${agent.id}`, {
      body: { tools: [{ ...shopTool(shop.url, null), include: ['lookup_order'] }] },
    });
    expect(patched.status, patched.text).toBe(200);
    const tools = ((patched.json() as Agent).tools[0] as unknown as { tools: Array<{ name: string }> }).tools;
    expect(tools.map((t) => t.name)).toEqual(['lookup_order']);
    toolCallsThenText(bed.ollama, { name: 'shop_lookup_order', arguments: { orderId: 'B-2' } });
    const turn = await send(bed, agent.id, { content: 'order B-2' });
    expect(toolSteps(turn.messages[1])[0]?.output).toEqual({ orderId: 'B-2', status: 'shipped' });
    expect(chatCalls(bed.ollama)[0]?.tools.map((t) => t.name)).toEqual(['shop_lookup_order']);
  });
});
