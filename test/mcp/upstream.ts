/**
 * MCP servers for the agent-client suite, started in-process on loopback: the SDK's own McpServer on
 * the Streamable HTTP transport (stateless), behind a header credential, with a tool that hangs, one
 * that answers too much, and one whose answer is cut to garbage on the wire; and a server that never
 * answers at all.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export const UPSTREAM_TOKEN = 'mcp-upstream-secret';

export interface Upstream {
  url: string;
  port: number;
  /** Every tools/call received: its tool and arguments, and the credential header as it came. */
  calls: Array<{ name: string; arguments: unknown; token: string | undefined }>;
  close(): Promise<void>;
}

function shopServer(): McpServer {
  const server = new McpServer({ name: 'shop', version: '1.0.0' });
  server.registerTool(
    'lookup_order',
    {
      description: 'Looks up an order by its id',
      inputSchema: { orderId: z.string().regex(/^[A-Z]-\d+$/) },
    },
    async ({ orderId }) => ({
      content: [{ type: 'text', text: JSON.stringify({ orderId, status: 'shipped' }) }],
    }),
  );
  server.registerTool('slow', { description: 'Never finishes' }, () => new Promise(() => undefined));
  server.registerTool('big', { description: 'Answers two megabytes' }, async () => ({
    content: [{ type: 'text', text: 'x'.repeat(2 * 1024 * 1024) }],
  }));
  server.registerTool('garbage', { description: 'Its answer is cut on the wire' }, async () => ({
    content: [{ type: 'text', text: 'fine' }],
  }));
  server.registerTool('fails', { description: 'Answers a tool error' }, async () => ({
    content: [{ type: 'text', text: 'the warehouse is closed' }],
    isError: true,
  }));
  return server;
}

async function readBody(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function closer(server: http.Server): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
}

/** The SDK's McpServer, a fresh one per request (the SDK's stateless pattern). */
export async function startShop(): Promise<Upstream> {
  const calls: Upstream['calls'] = [];
  const server = http.createServer((req, res) => {
    void (async () => {
      const token = req.headers['x-mcp-token'];
      if (token !== UPSTREAM_TOKEN) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
        return;
      }
      const body = await readBody(req);
      const message = body as {
        method?: string;
        id?: number;
        params?: { name?: string; arguments?: unknown };
      };
      if (message?.method === 'tools/call') {
        calls.push({ name: message.params?.name ?? '', arguments: message.params?.arguments, token });
        if (message.params?.name === 'garbage') {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(`{"jsonrpc":"2.0","id":${message.id},"resu`);
          return;
        }
      }
      const mcp = shopServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}/mcp`, port, calls, close: closer(server) };
}

/** Accepts every request and never answers. */
export async function startSilent(): Promise<Upstream> {
  const server = http.createServer(() => undefined);
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}/mcp`, port, calls: [], close: closer(server) };
}
