import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../core/http/auth-hook.js';
import { withErrors } from '../../core/http/schemas.js';
import { type CallSlots, toolCallsIn } from './call-slots.js';
import type { PlatformMcpServer } from './mcp-server.js';

export interface McpRouteDeps {
  server: PlatformMcpServer;
  slots: CallSlots;
  bodyLimit: number;
}

/**
 * Any key reaches the route; what it sees is filtered per tool by the scope that tool's own route
 * needs (tool-catalog.ts). Keys only: a browser session's cookie must not drive tools cross-site,
 * and a customer token is a customer's credential, not the integration's.
 */
const keysOnly = { auth: { service: 'core', anyService: true, principals: ['api_key'] } } as const;

/** The headers the MCP transport reads; the rest of the request stays with Fastify. */
const MCP_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];

function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const name of MCP_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  return new Request(`http://platform${request.url}`, { method: request.method, headers });
}

/**
 * `POST /mcp`: the Streamable HTTP transport, stateless, answering JSON. GET (the server's own
 * stream) and DELETE (ending a session) have no route, so they are 405s, which MCP clients read as
 * "this server keeps no stream and no session".
 */
export function mcpRoutes(app: FastifyInstance, deps: McpRouteDeps): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.post(
    '/mcp',
    {
      config: keysOnly,
      bodyLimit: deps.bodyLimit,
      schema: {
        tags: ['MCP'],
        summary: 'MCP server (Streamable HTTP, stateless): workflows, knowledge search and agents as tools',
        description:
          'A JSON-RPC message of the Model Context Protocol (initialize, tools/list, tools/call, ping). ' +
          'Answers JSON-RPC as the MCP SDK does, errors of the protocol included; authentication and ' +
          "limits answer in the platform's error shape. tools/list shows what the key's scopes allow.",
        body: Type.Unknown({ description: 'A JSON-RPC request or notification' }),
        response: {
          ...withErrors({
            200: Type.Unknown({ description: 'The JSON-RPC answer' }),
            202: Type.Null({ description: 'A notification, accepted' }),
          }),
          // The transport's own refusals, as the MCP SDK answers them (a JSON-RPC error body).
          406: Type.Unknown({
            description: 'JSON-RPC error: the Accept header must name application/json and text/event-stream',
          }),
          415: Type.Unknown({ description: 'JSON-RPC error: the body must be application/json' }),
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const calls = toolCallsIn(request.body);
      const release = calls > 0 ? deps.slots.acquire(principal.accountId, calls) : () => undefined;
      try {
        const answer = await deps.server.handle({
          request: webRequest(request),
          body: request.body,
          principal,
        });
        reply.code(answer.status);
        const type = answer.headers.get('content-type');
        if (type) reply.header('content-type', type);
        const text = await answer.text();
        return text === '' ? reply.send() : reply.send(text);
      } finally {
        release();
      }
    },
  );
}
