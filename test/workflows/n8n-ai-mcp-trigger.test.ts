import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { agentOutput, runAgentWithTool } from './support/ai-agent-run.js';
import { LC } from './support/ai-workflow.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { activate, createCredential, createWorkflow, workflowPlatform } from './support.js';

/**
 * n8n's MCP Server Trigger: the tools attached to an active workflow's trigger, served at
 * `/mcp/{path}` and used by the MCP SDK's own client over Streamable HTTP, behind n8n's bearer and
 * header credentials.
 */

function mcpWorkflow(
  path: string,
  version: number,
  auth: { authentication: string; credentials?: Record<string, { id: string; name: string }> },
) {
  return {
    name: `mcp ${path}`,
    nodes: [
      {
        id: 'm',
        name: 'MCP Server Trigger',
        type: `${LC}.mcpTrigger`,
        typeVersion: version,
        position: [0, 0],
        webhookId: `hook-${path}`,
        parameters: { path, authentication: auth.authentication },
        ...(auth.credentials ? { credentials: auth.credentials } : {}),
      },
      {
        id: 'c',
        name: 'Calculator',
        type: `${LC}.toolCalculator`,
        typeVersion: 1,
        position: [0, 200],
        parameters: {},
      },
    ],
    connections: {
      Calculator: { ai_tool: [[{ node: 'MCP Server Trigger', type: 'ai_tool', index: 0 }]] },
    },
    settings: {},
  };
}

const openai = new FakeOpenAi();
beforeAll(() => openai.start());
afterAll(() => openai.stop());

describe.each(await testDialects())("n8n's MCP Server Trigger on %s", (dialect) => {
  let p: TestPlatform;
  let base = '';
  let bearerCred = '';
  let headerCred = '';
  const open: Client[] = [];

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    await p.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(p.app.server.address() as AddressInfo).port}`;
    bearerCred = await createCredential(p, 'mcp bearer', 'httpBearerAuth', { token: 'mcp-token' });
    headerCred = await createCredential(p, 'mcp header', 'httpHeaderAuth', {
      name: 'x-mcp-key',
      value: 'header-secret',
    });
    await activate(
      p,
      await createWorkflow(
        p,
        mcpWorkflow('calc', 2, {
          authentication: 'bearerAuth',
          credentials: { httpBearerAuth: { id: bearerCred, name: 'mcp bearer' } },
        }),
      ),
    );
    await activate(
      p,
      await createWorkflow(
        p,
        mcpWorkflow('legacy', 1.1, {
          authentication: 'headerAuth',
          credentials: { httpHeaderAuth: { id: headerCred, name: 'mcp header' } },
        }),
      ),
    );
  });
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => undefined)));
    p.app.server.closeAllConnections();
    await p.close();
  });

  async function connect(path: string, headers: Record<string, string>): Promise<Client> {
    const client = new Client({ name: 'test', version: '1.0.0' });
    open.push(client);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp/${path}`), { requestInit: { headers } }),
    );
    return client;
  }

  it('v2 with a bearer credential: lists the attached tool and answers its calls', async () => {
    const client = await connect('calc', { authorization: 'Bearer mcp-token' });
    expect(client.getServerVersion()?.name).toBe('MCP_Server_Trigger');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['calculator']);
    expect(tools[0]?.inputSchema).toMatchObject({ type: 'object', required: ['input'] });
    const result = await client.callTool({ name: 'calculator', arguments: { input: '2 + 3 * 4' } });
    expect(result).toMatchObject({ content: [{ type: 'text', text: '14' }] });
    expect(result.isError ?? false).toBe(false);
  });

  it('a bad argument is a tool error; an unknown tool a JSON-RPC error', async () => {
    const client = await connect('calc', { authorization: 'Bearer mcp-token' });
    const bad = await client.callTool({ name: 'calculator', arguments: { input: { nested: 1 } } });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain("'input' must be a string");
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/Tool nope not found/);
  });

  it('v1.1 at {path}/messages with a header credential', async () => {
    const client = await connect('legacy/messages', { 'x-mcp-key': 'header-secret' });
    // n8n names the server after the node from v1.1 on (`n8n-mcp-server` in v1).
    expect(client.getServerVersion()?.name).toBe('MCP_Server_Trigger');
    const result = await client.callTool({ name: 'calculator', arguments: { input: 'sqrt(81)' } });
    expect(result).toMatchObject({ content: [{ type: 'text', text: '9' }] });
  });

  it('refuses a missing or wrong credential before any run, and is no plain webhook', async () => {
    await expect(connect('calc', {})).rejects.toThrow(/401|Bearer/);
    await expect(connect('calc', { authorization: 'Bearer wrong' })).rejects.toThrow(/403|Bearer/);
    const init = { jsonrpc: '2.0', id: 1, method: 'ping' };
    const asWebhook = await p.request({ method: 'POST', url: '/webhook/calc', payload: init, key: null });
    expect(asWebhook.statusCode).toBe(404);
    expect(asWebhook.json()).toMatchObject({ code: 'WEBHOOK_NOT_FOUND' });
    const stream = await p.request({ method: 'GET', url: '/mcp/calc', key: null });
    expect(stream.statusCode).toBe(405);
    const unknown = await p.request({ method: 'POST', url: '/mcp/elsewhere', payload: init, key: null });
    expect(unknown.statusCode).toBe(404);
  });

  it("an AI Agent's MCP Client Tool uses another workflow's MCP Server Trigger", async () => {
    openai.reset();
    openai.queue(
      toolCalls([{ id: 'c1', name: 'calculator', arguments: JSON.stringify({ input: '6 * 7' }) }]),
      completion('It is 42.'),
    );
    const openAiCred = await createCredential(p, 'openai', 'openAiApi', {
      apiKey: 'sk-test',
      url: `${openai.base}/v1`,
    });
    const { execution: e } = await runAgentWithTool(
      p,
      openAiCred,
      {
        name: 'MCP Client',
        type: `${LC}.mcpClientTool`,
        typeVersion: 2,
        parameters: {
          endpointUrl: `${base}/mcp/calc`,
          serverTransport: 'httpStreamable',
          authentication: 'genericCredentialType',
          genericAuthType: 'httpBearerAuth',
        },
        credentials: { httpBearerAuth: { id: bearerCred, name: 'mcp bearer' } },
      },
      { typeVersion: 2, text: 'Six times seven?' },
    );
    expect(e.data.resultData.error ?? null).toBeNull();
    expect(agentOutput(e)).toEqual({ output: 'It is 42.' });
    const messages = (openai.requests[1]?.messages ?? []) as Array<{ role: string; content: string }>;
    expect(messages.at(-1)).toMatchObject({ role: 'tool', content: '42' });
  });

  it("n8n's own mcp-trigger-multi-tool.json, imported unmodified: three Code tools, called as n8n's e2e test does", async () => {
    const exported = JSON.parse(
      readFileSync(new URL('../fixtures/n8n/ai/mcp-trigger-multi-tool.json', import.meta.url), 'utf8'),
    ) as Record<string, unknown>;
    await activate(p, await createWorkflow(p, exported));
    const client = await connect('mcp-multi', {});
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['add', 'echo', 'multiply']);
    // The example JSON is the schema: the SDK client checks its arguments against it.
    expect(tools.find((t) => t.name === 'add')?.inputSchema).toMatchObject({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
    });
    const text = async (name: string, args: Record<string, unknown>) =>
      ((await client.callTool({ name, arguments: args })).content as Array<{ text: string }>)[0]?.text;
    expect(await text('echo', { message: 'Multi-tool test' })).toBe('Echo: Multi-tool test');
    expect(await text('add', { a: 5, b: 3 })).toBe('Sum: 8');
    expect(await text('multiply', { a: 4, b: 7 })).toBe('Product: 28');
  });

  it('a JSON-RPC batch is refused before any run: one request, one message', async () => {
    const call = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'calc', arguments: {} },
    });
    const res = await p.request({
      method: 'POST',
      url: '/mcp/calc',
      headers: {
        authorization: 'Bearer mcp-token',
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      payload: JSON.stringify([call(1), call(2), call(3)]),
      key: null,
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR' });
    expect(res.json().message).toMatch(/batches are refused/);
  });

  it('garbage is answered with a JSON-RPC error, not a 500', async () => {
    const res = await p.request({
      method: 'POST',
      url: '/mcp/calc',
      headers: {
        authorization: 'Bearer mcp-token',
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      payload: JSON.stringify({ hello: 'world' }),
      key: null,
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
  });
});
