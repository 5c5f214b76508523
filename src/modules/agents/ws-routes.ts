import type { IncomingMessage } from 'node:http';
import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../core/context.js';
import { AppError } from '../../core/errors.js';
import { withErrors } from '../../core/http/schemas.js';
import { streamHolder } from '../../core/http/stream-slots.js';
import type { AgentMessaging } from './agent-events.js';
import { SocketGate, type SocketIdentity } from './ws-auth.js';
import { AgentConnection, type AgentSocket } from './ws-connection.js';
import { bearerProtocol, CLOSE } from './ws-protocol.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the WebSocket route's preValidation once the upgrade is admitted. */
    agentSocket?: SocketIdentity;
  }
}

/**
 * A browser that offered subprotocols fails the connection unless the answer selects one: select
 * the `bearer.<token>` entry the credential came in (none offered, none selected).
 */
function selectProtocol(protocols: Set<string>, _request: IncomingMessage): string | false {
  return bearerProtocol([...protocols].join(',')) ?? false;
}

/** The agents' WebSocket channel, `GET /api/agents/ws` (docs/agents-websocket.md). */
export async function agentSocketRoutes(
  app: FastifyInstance,
  ctx: AppContext,
  messaging: AgentMessaging,
): Promise<void> {
  const gate = new SocketGate(ctx);
  const connections = new Set<AgentConnection>();

  await app.register(async (scope) => {
    // Before the plugin's own preClose (which would close with no code): clients are told 1001.
    scope.addHook('preClose', async () => {
      for (const connection of connections) connection.shutdown();
    });
    await scope.register(websocket, {
      options: {
        // `ws` closes with 1009 on a larger message, before it is buffered whole.
        maxPayload: ctx.config.AGENT_WS_MAX_MESSAGE_BYTES,
        handleProtocols: selectProtocol,
        perMessageDeflate: false,
      },
      // A socket error (a client gone mid-frame, a protocol violation `ws` answers with its own
      // close code) needs no more than a log line: `ws` has closed or is closing the socket.
      errorHandler: (error, socket, request) => {
        request.log.debug({ err: error }, 'agent WebSocket error');
        const open = socket as unknown as AgentSocket;
        if (open.readyState === 1) open.close(CLOSE.internal, 'internal error');
      },
    });

    scope.route({
      method: 'GET',
      url: '/api/agents/ws',
      // The platform's auth hook reads headers only; the gate also reads the subprotocol.
      config: { public: true },
      schema: {
        tags: ['Agents'],
        summary: 'The agents WebSocket channel (an upgrade; protocol in docs/agents-websocket.md)',
        description:
          'Upgrade with `Authorization: Bearer <key or customer token>` or a `bearer.<token>` subprotocol. ' +
          'A request that does not upgrade is a 400.',
        response: withErrors({
          101: Type.Null({ description: 'Switching Protocols: the WebSocket is open' }),
        }),
      },
      preValidation: async (request: FastifyRequest) => {
        request.agentSocket = await gate.admit(request);
        request.principal = request.agentSocket.principal;
        // The slot is the socket's: given back when it closes, whether or not the upgrade completed.
        const release = ctx.streams?.acquire(streamHolder(request.principal, request.ip));
        if (release) request.raw.socket.once('close', release);
      },
      handler: async () => {
        throw new AppError('VALIDATION_ERROR', 'This endpoint takes WebSocket upgrades only', {
          fields: [{ field: 'headers.upgrade', message: 'must be websocket' }],
        });
      },
      wsHandler: (socket: unknown, request: FastifyRequest) => {
        const identity = request.agentSocket;
        const open = socket as AgentSocket;
        if (!identity) {
          open.close(CLOSE.unauthorized, 'not authenticated');
          return;
        }
        const connection: AgentConnection = new AgentConnection(
          open,
          identity,
          { ctx, gate, messaging },
          () => connections.delete(connection),
        );
        connections.add(connection);
      },
    });
  });
}
