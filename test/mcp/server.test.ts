import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAgent, expectError, seedTopic } from '../agents/support.js';
import { otherAccountKey } from '../helpers/accounts.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { createWorkflow, flow } from '../workflows/support.js';
import { call, mcpClient, resultText, rpc } from './support.js';

const TOOL_TIMEOUT_MS = 3_000;

/** webhook → set: answers the order it was asked about. */
function orderLookup(name: string, path: string, settings: Record<string, unknown>) {
  return {
    ...flow(name, [
      { name: 'Webhook', type: 'webhook', parameters: { path, responseMode: 'lastNode' } },
      {
        name: 'Set',
        type: 'set',
        parameters: { keepOnlySet: true, values: { order: '={{ $json.body.orderId }}', status: 'shipped' } },
      },
    ]),
    settings,
  };
}

const callTool = { jsonrpc: '2.0', id: 1, method: 'tools/call' } as const;

describe.each(await testDialects())('MCP server on %s', (dialect) => {
  let bed: LlmTestbed;
  let client: Client;
  let marked: string;
  let unmarked: string;
  let othersMarked: string;
  let agentId: string;
  let otherKey: string;

  beforeAll(async () => {
    bed = await startLlmTestbed(
      dialect,
      {
        MCP_TOOL_TIMEOUT_MS: String(TOOL_TIMEOUT_MS),
        MCP_CALLS_PER_ACCOUNT: '1',
        MCP_BODY_LIMIT_BYTES: '8192',
        MCP_MAX_RESULT_CHARS: '2000',
      },
      // The model's own time bound stays out of the way of the tool call's.
      { timeoutMs: 60_000 },
    );
    await seedTopic(bed, 'kb');
    marked = await createWorkflow(
      bed.p,
      orderLookup('order lookup', 'mcp-orders', {
        availableInMCP: true,
        mcpDescription: 'Looks up an order',
      }),
    );
    unmarked = await createWorkflow(bed.p, orderLookup('not a tool', 'mcp-hidden', {}));
    otherKey = await otherAccountKey(bed.p);
    othersMarked = await createWorkflow(
      bed.p,
      orderLookup('someone else', 'mcp-other', { availableInMCP: true }),
      otherKey,
    );
    agentId = (await createAgent(bed, { name: 'helper', model: 'llama3.2', instructions: 'Be brief.' })).id;
    client = await mcpClient(bed);
  });
  afterAll(async () => {
    await client?.close();
    await bed?.close();
  });
  beforeEach(() => {
    bed.ollama.reset();
  });

  it('the SDK client lists the marked workflows, the knowledge search and the agents of the account', async () => {
    expect(client.getServerVersion()?.name).toBe('platform');
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain(`workflow_${marked}`);
    expect(names).toContain('knowledge_search');
    expect(names).toContain(`agent_${agentId}`);
    expect(names).not.toContain(`workflow_${unmarked}`);
    expect(names).not.toContain(`workflow_${othersMarked}`);
    const wf = tools.find((t) => t.name === `workflow_${marked}`);
    expect(wf).toMatchObject({ title: 'order lookup', description: 'Looks up an order' });
    expect(wf?.inputSchema.type).toBe('object');
  });

  it('calls a workflow: it runs (mode mcp) and its output is the result', async () => {
    const result = await client.callTool({ name: `workflow_${marked}`, arguments: { orderId: 'A-17' } });
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(resultText(result))).toEqual({ order: 'A-17', status: 'shipped' });
    expect(result.structuredContent).toEqual({ order: 'A-17', status: 'shipped' });
    const runs = await call(bed, 'GET', `/api/v1/executions?workflowId=${marked}&limit=10`);
    expect((runs.json() as { data: Array<{ mode: string }> }).data.map((e) => e.mode)).toContain('mcp');
  });

  it('searches the knowledge base', async () => {
    const result = await client.callTool({ name: 'knowledge_search', arguments: { query: 'otters sleep' } });
    expect(result.isError).toBeFalsy();
    const found = result.structuredContent as { results: Array<{ title: string; text: string }> };
    expect(found.results[0]?.title).toBe('Otters');
  });

  it('asks an agent: its answer and the conversation to continue', async () => {
    const result = await client.callTool({
      name: `agent_${agentId}`,
      arguments: { question: 'hello there' },
    });
    expect(result.isError, resultText(result)).toBeFalsy();
    const answer = result.structuredContent as { answer: string; conversationId: string };
    expect(answer.answer).toContain('hello there');
    const conv = await call(bed, 'GET', `/api/conversations/${answer.conversationId}`);
    expect(conv.status).toBe(200);
  });

  it('X-API-Key works as Bearer does', async () => {
    const viaHeader = await mcpClient(bed, bed.p.adminKey, 'x-api-key');
    try {
      expect((await viaHeader.listTools()).tools.length).toBeGreaterThan(2);
    } finally {
      await viaHeader.close();
    }
  });

  it('no key or a wrong key: 401 in the platform shape; the SDK client fails to connect', async () => {
    expectError(
      await rpc(bed, { ...callTool, params: { name: 'knowledge_search' } }, null),
      401,
      'UNAUTHORIZED',
    );
    expectError(await rpc(bed, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, 'PROD_API_wrong'), 401);
    await expect(mcpClient(bed, 'PROD_API_wrong')).rejects.toThrow(/UNAUTHORIZED/);
  });

  it('a customer token is refused (403)', async () => {
    const res = await call(bed, 'POST', '/v1/auth/tokens', {
      body: { customerId: 'c1', scopes: ['agent:read', 'agent:write'] },
    });
    const token = (res.json() as { token: string }).token;
    expectError(await rpc(bed, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, token), 403, 'FORBIDDEN');
  });

  it("tools/list shows only what the key's scopes allow, and a hidden tool cannot be called", async () => {
    const reader = await bed.p.createKey({
      name: 'kb reader',
      type: 'development',
      services: ['docproc'],
      role: 'Custom',
      scopes: ['docproc:read'],
    });
    const limited = await mcpClient(bed, reader.key);
    try {
      expect((await limited.listTools()).tools.map((t) => t.name)).toEqual(['knowledge_search']);
      await expect(
        limited.callTool({ name: `workflow_${marked}`, arguments: { orderId: 'x' } }),
      ).rejects.toThrow(/not found/);
      await expect(
        limited.callTool({ name: `agent_${agentId}`, arguments: { question: 'hi' } }),
      ).rejects.toThrow(/not found/);
    } finally {
      await limited.close();
    }
    const runner = await bed.p.createKey({
      name: 'runner',
      type: 'development',
      services: ['workflow'],
      role: 'Writer',
    });
    const runs = await mcpClient(bed, runner.key);
    try {
      expect((await runs.listTools()).tools.map((t) => t.name)).toEqual([`workflow_${marked}`]);
    } finally {
      await runs.close();
    }
  });

  it("another account's workflow or agent is not found, and its own list is its own", async () => {
    await expect(client.callTool({ name: `workflow_${othersMarked}`, arguments: {} })).rejects.toThrow(
      /not found/,
    );
    await expect(client.callTool({ name: `workflow_${unmarked}`, arguments: {} })).rejects.toThrow(
      /not found/,
    );
    const other = await mcpClient(bed, otherKey);
    try {
      const names = (await other.listTools()).tools.map((t) => t.name);
      expect(names).toContain(`workflow_${othersMarked}`);
      expect(names).not.toContain(`workflow_${marked}`);
      expect(names).not.toContain(`agent_${agentId}`);
      await expect(
        other.callTool({ name: `agent_${agentId}`, arguments: { question: 'hi' } }),
      ).rejects.toThrow(/not found/);
    } finally {
      await other.close();
    }
  });

  it('arguments that break the schema are a protocol error; the tool never runs', async () => {
    await expect(client.callTool({ name: 'knowledge_search', arguments: { query: '' } })).rejects.toThrow(
      /Invalid arguments/,
    );
    await expect(
      client.callTool({ name: `agent_${agentId}`, arguments: { question: 'hi', extra: 1 } }),
    ).rejects.toThrow(/Invalid arguments/);
  });

  it('an answer longer than the bound is cut and says so', async () => {
    const result = await client.callTool({
      name: `workflow_${marked}`,
      arguments: { orderId: 'x'.repeat(5_000) },
    });
    const content = result.content as Array<{ text: string }>;
    expect(content[0]?.text).toHaveLength(2_000);
    expect(content[1]?.text).toMatch(/cut at 2000 of \d+ characters/);
    expect(result.structuredContent).toBeUndefined();
  });

  it('a body over the bound is a 413; broken JSON a 400; GET and DELETE 405', async () => {
    const big = {
      ...callTool,
      params: { name: 'knowledge_search', arguments: { query: 'x'.repeat(10_000) } },
    };
    expectError(await rpc(bed, big), 413);
    expectError(await rpc(bed, '{"jsonrpc":'), 400);
    expect((await call(bed, 'GET', '/mcp')).status).toBe(405);
    expect((await call(bed, 'DELETE', '/mcp')).status).toBe(405);
  });

  it('a tool that outlives the time bound is a timed-out tool error, and its model call is stopped', async () => {
    bed.ollama.stallAfterChunks = 0;
    const started = Date.now();
    const result = await client.callTool({ name: `agent_${agentId}`, arguments: { question: 'slow one' } });
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(`did not finish within ${TOOL_TIMEOUT_MS} ms`);
    expect(Date.now() - started).toBeLessThan(TOOL_TIMEOUT_MS + 5_000);
    await bed.ollama.untilAborted();
  });

  it('tool calls past the per-account bound are refused with 429 while one runs', async () => {
    bed.ollama.stallAfterChunks = 0;
    const first = client.callTool({ name: `agent_${agentId}`, arguments: { question: 'hold the slot' } });
    await until(
      () => bed.ollama.requests.some((r) => r.path === '/api/chat'),
      'the first call to reach the model',
    );
    const second = await rpc(bed, {
      ...callTool,
      params: { name: 'knowledge_search', arguments: { query: 'x' } },
    });
    const body = expectError(second, 429, 'RATE_LIMIT_EXCEEDED');
    expect(body.message).toMatch(/at most 1/);
    expect(second.headers.get('retry-after')).toBe('1');
    // Listing is not a call: it still answers.
    expect((await rpc(bed, { jsonrpc: '2.0', id: 2, method: 'tools/list' })).status).toBe(200);
    expect((await first).isError).toBe(true);
    // The slot is free again.
    const after = await client.callTool({ name: 'knowledge_search', arguments: { query: 'lighthouse' } });
    expect(after.isError).toBeFalsy();
  });
});
