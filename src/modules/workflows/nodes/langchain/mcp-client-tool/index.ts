import { type Static, Type } from 'typebox';
import type { McpConnection, McpConnectionOptions, McpEndpoint } from '../../../../agents/index.js';
import { customAuth, multipleHeaders } from '../../../credentials/http-auth-data.js';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { credentialRefOf } from '../../../engine/types.js';
import { type AiTool, LANGCHAIN } from '../ai-parts.js';
import { guardedStreamFetch } from './stream-fetch.js';

const Names = Type.Union([Type.Array(Type.String({ maxLength: 200 }), { maxItems: 200 }), Type.String()]);

const Parameters = Type.Object(
  {
    notice: Type.Optional(Type.String()),
    sseEndpoint: Type.String({ default: '', maxLength: 4_000 }),
    endpointUrl: Type.String({ default: '', maxLength: 4_000 }),
    serverTransport: Type.Enum(['sse', 'httpStreamable'] as const, { default: 'sse' }),
    authentication: Type.Enum(
      [
        'none',
        'bearerAuth',
        'headerAuth',
        'customAuth',
        'multipleHeadersAuth',
        'mcpOAuth2Api',
        'genericCredentialType',
      ] as const,
      { default: 'none' },
    ),
    genericAuthType: Type.Optional(Type.String({ maxLength: 100 })),
    credentials: Type.Optional(Type.String()),
    include: Type.Enum(['all', 'selected', 'except'] as const, { default: 'all' }),
    includeTools: Type.Optional(Names),
    excludeTools: Type.Optional(Names),
    options: Type.Object(
      { timeout: Type.Optional(Type.Number({ minimum: 1 })) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);
type Params = Static<typeof Parameters>;

/** n8n's default wait for a tool call; the platform's bound on any one exchange with a server. */
const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_TIMEOUT_MS = 300_000;
/** Most bytes an SSE server's event stream may carry for one use. */
const MAX_STREAM_BYTES = 10 * 1024 * 1024;
/** Most characters of a tool's answer the model reads. */
const MAX_ANSWER_CHARS = 100_000;

/** The credential types n8n's MCP Client Tool takes, by its `authentication` (v1.x) or generic type (v2). */
const CREDENTIAL_TYPE: Record<string, string> = {
  bearerAuth: 'httpBearerAuth',
  headerAuth: 'httpHeaderAuth',
  customAuth: 'httpCustomAuth',
  multipleHeadersAuth: 'httpMultipleHeadersAuth',
};
const GENERIC_TYPES = ['httpBearerAuth', 'httpHeaderAuth', 'httpCustomAuth', 'httpBasicAuth'];

/**
 * n8n's MCP Client Tool: the tools of an MCP server (all, selected, or all but some) offered to the
 * agent it is attached to. It is an adapter on the agents' MCP client (one client): outbound-address
 * guard, no redirect, every exchange bounded by the node's timeout; Streamable HTTP or the older
 * HTTP+SSE transport as the node says. The server is connected for the tool list when the agent
 * starts and again per call, and closed after each (a stream of the SSE transport is never left open).
 */
export const mcpClientToolNode = defineSubNode({
  type: `${LANGCHAIN}.mcpClientTool`,
  versions: [1, 1.1, 1.2, 2],
  schema: Parameters,
  subNode: 'ai_tool',
  async supply(ctx, itemIndex): Promise<AiTool[]> {
    const p = await ctx.params(itemIndex);
    const version = ctx.node.typeVersion ?? 1;
    const url = (version === 1 ? p.sseEndpoint : p.endpointUrl).trim();
    if (url === '') throw new NodeOperationError('The MCP server endpoint is empty');
    const transport = version === 1 || p.serverTransport === 'sse' ? 'sse' : 'streamableHttp';
    const headers = await headersOf(ctx.node.credentials, p, version, ctx.credential);
    const timeoutMs = Math.min(p.options.timeout ?? DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
    const connectAddress = ctx.deps.connectAddress;
    const options: McpConnectionOptions = {
      http: ctx.deps.http,
      timeoutMs,
      clientName: 'platform-workflow',
      ...(connectAddress
        ? {
            streamFetch: guardedStreamFetch((host, port) => connectAddress(host, port), {
              timeoutMs,
              maxBytes: MAX_STREAM_BYTES,
            }),
          }
        : {}),
    };
    const endpoint: McpEndpoint = { url, transport, headers };
    const { McpConnection } = await import('../../../../agents/index.js');
    const open = () => new McpConnection(endpoint, options);
    const listed = await using(open(), (c) => c.listTools()).catch((error: unknown) => {
      throw new NodeOperationError('Could not connect to your MCP server', {
        description: error instanceof Error ? error.message : String(error),
      });
    });
    const selected = selectTools(
      listed.map((t) => t.name),
      p,
    );
    const tools = listed.filter((t) => selected.has(t.name));
    if (tools.length === 0)
      throw new NodeOperationError('MCP Server returned no tools', {
        description: 'Connected successfully to your MCP server but it returned an empty list of tools.',
      });
    return tools.map((tool) => ({
      kind: 'tool',
      name: tool.name,
      description: tool.description ?? '',
      parameters: objectSchema(tool.inputSchema),
      async run(args) {
        const signal = AbortSignal.timeout(timeoutMs);
        const answer = await using(open(), (c) => c.call(tool.name, args, signal)).catch((error: unknown) => {
          if (signal.aborted)
            throw new Error(`the MCP server at ${url} did not answer within ${timeoutMs} ms`);
          throw error;
        });
        const text = typeof answer === 'string' ? answer : JSON.stringify(answer);
        return text.length > MAX_ANSWER_CHARS ? text.slice(0, MAX_ANSWER_CHARS) : answer;
      },
    }));
  },
});

async function using<T>(connection: McpConnection, work: (c: McpConnection) => Promise<T>): Promise<T> {
  try {
    return await work(connection);
  } finally {
    await connection.close();
  }
}

/** A server's input schema as a function's parameters: an object schema, whatever the server sent. */
function objectSchema(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  if (schema && typeof schema === 'object' && schema.type === 'object') return schema;
  return { type: 'object', properties: {} };
}

function namesOf(value: Params['includeTools']): string[] {
  if (Array.isArray(value)) return value;
  if (typeof value === 'string' && value.trim() !== '')
    return value
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '');
  return [];
}

function selectTools(names: string[], p: Params): Set<string> {
  if (p.include === 'selected') {
    const wanted = new Set(namesOf(p.includeTools));
    return new Set(names.filter((n) => wanted.has(n)));
  }
  if (p.include === 'except') {
    const unwanted = new Set(namesOf(p.excludeTools));
    return new Set(names.filter((n) => !unwanted.has(n)));
  }
  return new Set(names);
}

async function headersOf(
  credentials: Record<string, unknown> | undefined,
  p: Params,
  version: number,
  read: (id: string) => Promise<Record<string, string>>,
): Promise<Record<string, string>> {
  if (p.authentication === 'none') return {};
  const type =
    p.authentication === 'genericCredentialType'
      ? (p.genericAuthType ?? '')
      : CREDENTIAL_TYPE[p.authentication];
  const allowed =
    p.authentication === 'genericCredentialType'
      ? version >= 2 && GENERIC_TYPES.includes(type ?? '')
      : version < 2 && type !== undefined;
  if (!type || !allowed)
    throw new NodeOperationError(
      `Authentication '${p.authentication}'${p.genericAuthType ? ` (${p.genericAuthType})` : ''} is not supported by the MCP Client Tool v${version}`,
    );
  const id = credentialRefOf(credentials?.[type] as never);
  if (!id) throw new NodeOperationError(`Node does not have any credentials set for "${type}"`);
  const data = await read(id);
  const need = (field: string): string => {
    const v = data[field];
    if (typeof v !== 'string' || v === '')
      throw new NodeOperationError(`The ${type} credential has no '${field}'`);
    return v;
  };
  switch (type) {
    case 'httpBearerAuth':
      return { authorization: `Bearer ${need('token')}` };
    case 'httpHeaderAuth':
      return { [need('name')]: need('value') };
    case 'httpBasicAuth':
      return {
        authorization: `Basic ${Buffer.from(`${need('user')}:${need('password')}`).toString('base64')}`,
      };
    case 'httpMultipleHeadersAuth':
      return Object.fromEntries(readShared(() => multipleHeaders(need('headers')), type));
    default:
      // n8n's MCP client sends only the Custom Auth's headers (not its qs or body).
      return Object.fromEntries(readShared(() => customAuth(data.json ?? '').headers, type));
  }
}

/** A credential read by the shared reader (the one the credential API and the HTTP Request node use). */
function readShared<T>(read: () => T, type: string): T {
  try {
    return read();
  } catch (error) {
    throw new NodeOperationError(`The ${type} credential is not usable: ${(error as Error).message}`);
  }
}
