import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { OutboundHttp } from '../../core/http/outbound.js';
import type { SecretBox } from '../../core/secrets.js';
import { VERSION } from '../../version.js';
import { outboundFetch } from './mcp-fetch.js';

/** A tool of an MCP server as listed when the agent was saved. */
export interface McpToolSnapshot {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** An agent tool of type `mcp`, as stored: its header credential sealed, its tools as listed at save. */
export interface McpServerTool {
  type: 'mcp';
  /** `mcp:<label>`: the label prefixes the functions the model sees. */
  name: string;
  url: string;
  credential?: { header: string; sealed: string };
  /** Only these tools of the server (default: all). */
  include?: string[];
  tools: McpToolSnapshot[];
}

export interface McpConnectorOptions {
  http: OutboundHttp;
  /** Opens (and seals) agents' credentials. */
  box: SecretBox;
  /** Each exchange with a server (connect, list, call) at most this long. */
  timeoutMs: number;
  /**
   * A fetch that may keep a GET event stream open (guarded like `http`), for servers on the older
   * HTTP+SSE transport; absent, such servers are refused.
   */
  streamFetch?: FetchLike;
  /** The client's name in `initialize`. */
  clientName?: string;
}

/** A connection's options: without a box, only an endpoint's plain `headers` are sent (a workflow's). */
export type McpConnectionOptions = Omit<McpConnectorOptions, 'box'> & { box?: SecretBox };

/** Where an MCP server is and how to reach it. */
export interface McpEndpoint extends Pick<McpServerTool, 'url' | 'credential'> {
  /** Headers sent as given (a workflow credential, already opened). */
  headers?: Record<string, string>;
  /** `sse`: the older HTTP+SSE transport (an event stream and POSTed messages); default Streamable HTTP. */
  transport?: 'streamableHttp' | 'sse';
}

/** Tools of one server an agent takes at most; schemas larger than this are refused. */
export const MAX_MCP_TOOLS = 64;
const MAX_SCHEMA_CHARS = 20_000;
const MAX_LIST_PAGES = 10;

/**
 * The SDK checks a tool's structured output against the output schema the server sent: a schema
 * the server chose (its regular expressions included) would run in this process. The agent loop
 * reads the output as the model does, unchecked, so the check is off.
 */
const noOutputCheck: jsonSchemaValidator = {
  getValidator: () => (input) => ({ valid: true, data: input as never, errorMessage: undefined }),
};

/** Why an MCP exchange failed, in words the model and the person saving the agent can act on. */
export class McpToolError extends Error {}

function describe(error: unknown, url: string, timeoutMs: number): McpToolError {
  const message = error instanceof Error ? error.message : String(error);
  if (
    error instanceof Error &&
    (error.name === 'OutboundTimeoutError' || /timed out|Request timed out/i.test(message))
  )
    return new McpToolError(`the MCP server at ${url} did not answer within ${timeoutMs} ms`);
  // The SDK's StreamableHTTPError carries the HTTP status as a number (JSON-RPC errors' codes are negative).
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  const status = typeof code === 'number' && code >= 100 && code < 600 ? ` (HTTP ${code})` : '';
  return new McpToolError(`the MCP server at ${url} failed${status}: ${message.slice(0, 500)}`);
}

/** An MCP client connection for one agent tool, opened on first use and closed with the turn. */
export class McpConnection {
  private client: Promise<Client> | null = null;

  constructor(
    private readonly server: McpEndpoint,
    private readonly options: McpConnectionOptions,
  ) {}

  private async transport(): Promise<Transport> {
    const { url, credential, transport: kind } = this.server;
    const headers: Record<string, string> = { ...this.server.headers };
    if (credential) {
      if (!this.options.box) throw new McpToolError('sealed MCP credentials cannot be opened here');
      headers[credential.header] = this.options.box.decrypt(credential.sealed);
    }
    let endpoint: URL;
    try {
      endpoint = new URL(url);
    } catch {
      throw new McpToolError(`'${url.slice(0, 200)}' is not a valid URL`);
    }
    // No redirect is followed (outboundFetch), so the credential header cannot travel elsewhere.
    const fetch = outboundFetch(this.options.http, this.options.timeoutMs, credential?.header);
    if (kind === 'sse') {
      const streamFetch = this.options.streamFetch;
      if (!streamFetch) throw new McpToolError('MCP servers on the SSE transport are not supported here');
      const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
      return new SSEClientTransport(endpoint, {
        fetch,
        requestInit: { headers },
        eventSourceInit: { fetch: streamFetch },
      });
    }
    const { StreamableHTTPClientTransport } = await import(
      '@modelcontextprotocol/sdk/client/streamableHttp.js'
    );
    return new StreamableHTTPClientTransport(endpoint, {
      fetch,
      requestInit: { headers },
      // One attempt: a failing server is reported, not retried for the length of a turn.
      reconnectionOptions: {
        maxReconnectionDelay: 0,
        initialReconnectionDelay: 0,
        reconnectionDelayGrowFactor: 1,
        maxRetries: 0,
      },
    });
  }

  private connect(signal?: AbortSignal): Promise<Client> {
    this.client ??= (async () => {
      // The SDK (and zod) load when an MCP server is first used, not at every start.
      const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
      const transport = await this.transport();
      const client = new Client(
        { name: this.options.clientName ?? 'platform-agent', version: VERSION },
        { jsonSchemaValidator: noOutputCheck },
      );
      await client.connect(transport, { timeout: this.options.timeoutMs, ...(signal ? { signal } : {}) });
      return client;
    })();
    return this.client;
  }

  async listTools(): Promise<McpToolSnapshot[]> {
    const out: McpToolSnapshot[] = [];
    try {
      const client = await this.connect();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const listed = await client.listTools(cursor ? { cursor } : {}, { timeout: this.options.timeoutMs });
        for (const tool of listed.tools) {
          out.push({
            name: tool.name,
            ...(tool.description ? { description: tool.description.slice(0, 2_000) } : {}),
            inputSchema: tool.inputSchema as Record<string, unknown>,
          });
        }
        cursor = listed.nextCursor;
        if (!cursor || out.length > MAX_MCP_TOOLS) break;
      }
    } catch (error) {
      throw describe(error, this.server.url, this.options.timeoutMs);
    }
    return out;
  }

  /** The tool's answer as the model reads it; a tool error or a failed exchange throws. */
  async call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    let result: Awaited<ReturnType<Client['callTool']>>;
    try {
      const client = await this.connect(signal);
      result = await client.callTool({ name, arguments: args }, undefined, {
        timeout: this.options.timeoutMs,
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw describe(error, this.server.url, this.options.timeoutMs);
    }
    const content = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [];
    const text = content
      .map((c) => (c.type === 'text' && typeof c.text === 'string' ? c.text : `[${String(c.type)} content]`))
      .join('\n');
    if (result.isError) throw new McpToolError(text || `the tool ${name} failed`);
    if (result.structuredContent !== undefined) return result.structuredContent;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }

  async close(): Promise<void> {
    const pending = this.client;
    this.client = null;
    if (!pending) return;
    await pending.then((c) => c.close()).catch(() => undefined);
  }
}

/** Why a stored schema from a server is not usable (too large), or null. */
export function mcpSchemaProblem(tool: McpToolSnapshot): string | null {
  if (JSON.stringify(tool.inputSchema).length > MAX_SCHEMA_CHARS)
    return `the input schema of ${tool.name} is larger than ${MAX_SCHEMA_CHARS} characters`;
  return null;
}

/** The MCP connections of one agent turn, by agent tool (`mcp:<label>`), opened on first call. */
export class McpTurnClients {
  private readonly open = new Map<string, McpConnection>();

  constructor(
    private readonly servers: readonly McpServerTool[],
    private readonly options: McpConnectorOptions | null,
  ) {}

  async call(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<unknown> {
    if (!this.options) throw new McpToolError('MCP tools are not enabled on this server');
    let connection = this.open.get(server);
    if (!connection) {
      const entry = this.servers.find((s) => s.name === server);
      if (!entry) throw new McpToolError(`unknown MCP server '${server}'`);
      connection = new McpConnection(entry, this.options);
      this.open.set(server, connection);
    }
    return connection.call(tool, args, signal);
  }

  async close(): Promise<void> {
    await Promise.all([...this.open.values()].map((c) => c.close()));
    this.open.clear();
  }
}
