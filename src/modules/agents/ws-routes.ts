import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../core/context.js';
import type { AgentMessaging } from './agent-events.js';

/** The agents' WebSocket channel, `GET /api/agents/ws` (being written: see issue 15). */
export async function agentSocketRoutes(
  _app: FastifyInstance,
  _ctx: AppContext,
  _messaging: AgentMessaging,
): Promise<void> {}
