/**
 * Helpers for the MCP suites: the SDK's own client against the platform's `/mcp`, and raw JSON-RPC
 * posts for what the client hides (status codes, the platform's error bodies).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { call, type Reply } from '../llm/calls.js';
import type { LlmTestbed } from '../llm/support.js';

/** An SDK client connected to the testbed's MCP server with `key` (Bearer, or X-API-Key). */
export async function mcpClient(
  bed: LlmTestbed,
  key: string = bed.p.adminKey,
  header: 'bearer' | 'x-api-key' = 'bearer',
): Promise<Client> {
  const headers: Record<string, string> =
    header === 'bearer' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key };
  const transport = new StreamableHTTPClientTransport(new URL(`${bed.url}/mcp`), {
    requestInit: { headers },
  });
  const client = new Client({ name: 'platform-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** A JSON-RPC request as a client sends it, answered as it came. */
export function rpc(
  bed: LlmTestbed,
  message: unknown,
  key: string | null = bed.p.adminKey,
  signal?: AbortSignal,
): Promise<Reply> {
  return callMcp(bed, message, key, signal);
}

async function callMcp(bed: LlmTestbed, message: unknown, key: string | null, signal?: AbortSignal) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-06-18',
  };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const res = await fetch(`${bed.url}/mcp`, {
    method: 'POST',
    headers,
    body: typeof message === 'string' ? message : JSON.stringify(message),
    ...(signal ? { signal } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

export { call };

/** The text of a tool result's content, joined. */
export function resultText(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? '').join('');
}
