import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { startShop, startSilent, UPSTREAM_TOKEN, type Upstream } from '../mcp/upstream.js';
import type { Execution } from './db-support.js';
import { agentOutput, runAgentWithTool } from './support/ai-agent-run.js';
import { type AiNodeSpec, LC } from './support/ai-workflow.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { createCredential, workflowPlatform } from './support.js';

/**
 * n8n's MCP Client Tool on an AI Agent: the SDK's own MCP servers (Streamable HTTP behind a header
 * credential, and the older HTTP+SSE transport behind a bearer token) answer the tools the model
 * calls through the agents' MCP client; a server that never answers is cut at the node's timeout,
 * one that answers garbage fails the call, and the model reads why.
 */

const openai = new FakeOpenAi();
let shop: Upstream;
let silent: Upstream;
let sse: { url: string; close(): Promise<void>; tokens: Array<string | undefined>; open: () => number };

const SSE_TOKEN = 'sse-secret';

/** The SDK's McpServer on its SSE transport: GET /sse opens a session, POST /messages feeds it. */
async function startSse(): Promise<typeof sse> {
  const sessions = new Map<string, SSEServerTransport>();
  const tokens: Array<string | undefined> = [];
  const server = http.createServer((req, res) => {
    void (async () => {
      tokens.push(req.headers.authorization);
      if (req.headers.authorization !== `Bearer ${SSE_TOKEN}`) {
        res.writeHead(401).end('unauthorized');
        return;
      }
      const url = new URL(req.url ?? '/', 'http://x');
      if (req.method === 'GET' && url.pathname === '/sse') {
        const transport = new SSEServerTransport('/messages', res);
        sessions.set(transport.sessionId, transport);
        res.on('close', () => sessions.delete(transport.sessionId));
        const mcp = new McpServer({ name: 'clock', version: '1.0.0' });
        mcp.registerTool(
          'add',
          { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
          async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
        );
        await mcp.connect(transport);
        return;
      }
      const transport = sessions.get(url.searchParams.get('sessionId') ?? '');
      if (req.method === 'POST' && url.pathname === '/messages' && transport) {
        await transport.handlePostMessage(req, res);
        return;
      }
      res.writeHead(404).end();
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/sse`,
    tokens,
    open: () => sessions.size,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

beforeAll(async () => {
  await openai.start();
  shop = await startShop();
  silent = await startSilent();
  sse = await startSse();
});
afterAll(async () => {
  await openai.stop();
  await shop.close();
  await silent.close();
  await sse.close();
});
beforeEach(() => {
  openai.reset();
  shop.calls.length = 0;
  sse.tokens.length = 0;
});

const toolResult = (i: number) =>
  ((openai.requests[i]?.messages ?? []) as Array<{ role: string; content: string }>).at(-1);
const offered = (i: number) =>
  ((openai.requests[i]?.tools ?? []) as Array<{ function: { name: string; parameters: unknown } }>).map(
    (t) => t.function,
  );

describe.each(await testDialects())("n8n's MCP Client Tool on %s", (dialect) => {
  let p: TestPlatform;
  let openAiCred = '';
  let headerCred = '';
  let bearerCred = '';

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    openAiCred = await createCredential(p, 'openai', 'openAiApi', {
      apiKey: 'sk-test',
      url: `${openai.base}/v1`,
    });
    headerCred = await createCredential(p, 'shop', 'httpHeaderAuth', {
      name: 'x-mcp-token',
      value: UPSTREAM_TOKEN,
    });
    bearerCred = await createCredential(p, 'clock', 'httpBearerAuth', { token: SSE_TOKEN });
  });
  afterAll(() => p.close());

  async function runAgent(tool: AiNodeSpec): Promise<Execution> {
    const { status, execution } = await runAgentWithTool(p, openAiCred, tool, {
      typeVersion: 2,
      text: 'Go',
      maxIterations: 4,
    });
    expect(status).toBe(200);
    return execution;
  }
  const outputOf = agentOutput;

  const shopTool = (parameters: Record<string, unknown>): AiNodeSpec => ({
    name: 'MCP Client',
    type: `${LC}.mcpClientTool`,
    typeVersion: 1.1,
    parameters: {
      endpointUrl: shop.url,
      serverTransport: 'httpStreamable',
      authentication: 'headerAuth',
      ...parameters,
    },
    credentials: { httpHeaderAuth: { id: headerCred, name: 'shop' } },
  });

  it('v1.1 on Streamable HTTP: selected tools offered, the call answered with the header credential', async () => {
    openai.queue(
      toolCalls([{ id: 'c1', name: 'lookup_order', arguments: JSON.stringify({ orderId: 'A-1' }) }]),
      completion('Shipped.'),
    );
    const e = await runAgent(shopTool({ include: 'selected', includeTools: ['lookup_order', 'fails'] }));
    expect(e.data.resultData.error ?? null).toBeNull();
    expect(outputOf(e)).toEqual({ output: 'Shipped.' });
    expect(
      offered(0)
        .map((t) => t.name)
        .sort(),
    ).toEqual(['fails', 'lookup_order']);
    expect(offered(0).find((t) => t.name === 'lookup_order')?.parameters).toMatchObject({
      type: 'object',
      properties: { orderId: { type: 'string' } },
    });
    expect(shop.calls).toEqual([
      { name: 'lookup_order', arguments: { orderId: 'A-1' }, token: UPSTREAM_TOKEN },
    ]);
    expect(JSON.parse(toolResult(1)?.content ?? '{}')).toEqual({ orderId: 'A-1', status: 'shipped' });
  });

  it('v1 on the SSE transport with a bearer credential; the event stream is closed afterwards', async () => {
    openai.queue(
      toolCalls([{ id: 'c1', name: 'add', arguments: JSON.stringify({ a: 2, b: 40 }) }]),
      completion('42'),
    );
    const e = await runAgent({
      name: 'MCP Client',
      type: `${LC}.mcpClientTool`,
      typeVersion: 1,
      parameters: { sseEndpoint: sse.url, authentication: 'bearerAuth' },
      credentials: { httpBearerAuth: { id: bearerCred, name: 'clock' } },
    });
    expect(e.data.resultData.error ?? null).toBeNull();
    expect(outputOf(e)).toEqual({ output: '42' });
    expect(offered(0).map((t) => t.name)).toEqual(['add']);
    expect(toolResult(1)?.content).toBe('42');
    expect(sse.tokens.every((t) => t === `Bearer ${SSE_TOKEN}`)).toBe(true);
    await expect.poll(() => sse.open(), { timeout: 5_000 }).toBe(0);
  });

  it('a tool error, a garbled answer and a wrong argument reach the model as tool errors', async () => {
    openai.queue(
      toolCalls([
        { id: 'c1', name: 'fails', arguments: '{}' },
        { id: 'c2', name: 'garbage', arguments: '{}' },
        { id: 'c3', name: 'lookup_order', arguments: JSON.stringify({ orderId: 'nope' }) },
      ]),
      completion('Could not.'),
    );
    const e = await runAgent(shopTool({ include: 'except', excludeTools: ['slow', 'big'] }));
    expect(e.data.resultData.error ?? null).toBeNull();
    expect(outputOf(e)).toEqual({ output: 'Could not.' });
    const messages = (openai.requests[1]?.messages ?? []) as Array<{ role: string; content: string }>;
    const results = messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results).toHaveLength(3);
    expect(results[0]).toContain('the warehouse is closed');
    expect(results[1]).toMatch(/failed|JSON|parse/i);
    expect(results[2]).toMatch(/orderId|invalid/i);
  });

  it.each([
    [
      'customAuth',
      'httpCustomAuth',
      { json: { headers: { 'x-mcp-token': UPSTREAM_TOKEN }, qs: { a: '1' } } },
    ],
    [
      'multipleHeadersAuth',
      'httpMultipleHeadersAuth',
      { headers: { values: [{ name: 'x-mcp-token', value: UPSTREAM_TOKEN }] } },
    ],
  ] as const)("v1.2's %s credential: its headers reach the server", async (authentication, type, data) => {
    const id = await createCredential(p, `shop ${type}`, type, data as unknown as Record<string, string>);
    openai.queue(
      toolCalls([{ id: 'c1', name: 'lookup_order', arguments: JSON.stringify({ orderId: 'B-2' }) }]),
      completion('Shipped.'),
    );
    const e = await runAgent({
      name: 'MCP Client',
      type: `${LC}.mcpClientTool`,
      typeVersion: 1.2,
      parameters: { endpointUrl: shop.url, serverTransport: 'httpStreamable', authentication },
      credentials: { [type]: { id, name: 'shop' } },
    });
    expect(e.data.resultData.error ?? null).toBeNull();
    expect(outputOf(e)).toEqual({ output: 'Shipped.' });
    expect(shop.calls).toEqual([
      { name: 'lookup_order', arguments: { orderId: 'B-2' }, token: UPSTREAM_TOKEN },
    ]);
  });

  it('a server that never answers fails the node at its timeout, naming the server', async () => {
    const started = Date.now();
    const e = await runAgent({
      name: 'MCP Client',
      type: `${LC}.mcpClientTool`,
      typeVersion: 1.1,
      parameters: { endpointUrl: silent.url, serverTransport: 'httpStreamable', options: { timeout: 500 } },
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    const error = e.data.resultData.error as { message: string; description?: string } | undefined;
    expect(error?.message).toContain('Could not connect to your MCP server');
    expect(error?.description ?? '').toContain('did not answer within 500 ms');
  });

  it('a private address is refused by the outbound guard (nothing allowed but the default)', async () => {
    const guarded = await workflowPlatform(dialect, { OUTBOUND_ALLOW_HOSTS: '' });
    try {
      const cred = await createCredential(guarded, 'openai', 'openAiApi', {
        apiKey: 'k',
        url: `${openai.base}/v1`,
      });
      const { execution } = await runAgentWithTool(
        guarded,
        cred,
        {
          name: 'MCP Client',
          type: `${LC}.mcpClientTool`,
          typeVersion: 1,
          parameters: { sseEndpoint: sse.url },
        },
        { typeVersion: 2, text: 'Go' },
      );
      const error = execution.data.resultData.error as { message: string; description?: string } | undefined;
      expect(error?.message).toContain('Could not connect to your MCP server');
      expect(error?.description ?? '').toContain('private or internal addresses');
      expect(sse.tokens).toEqual([]);
    } finally {
      await guarded.close();
    }
  });
});
