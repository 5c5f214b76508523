import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import { withErrors } from '../../core/http/schemas.js';
import type { AgentService } from './agent-service.js';
import type { ConversationService } from './conversation-service.js';
import type { MemoryService } from './memory-service.js';
import {
  AgentParams,
  MemoryBlockBody,
  MemoryBlockList,
  MemoryBlockParams,
  MemoryBlockPatch,
  MemoryBlockView,
  MemoryEditList,
} from './schemas.js';

const tags = ['Agents'];
const keysOnly = { auth: { service: 'agent' } } as const;

/** `/api/agents/{agentId}/memory/blocks`: an agent's memory blocks and their edit history (keys only). */
export function memoryRoutes(
  app: FastifyInstance,
  agents: AgentService,
  conversations: ConversationService,
  memory: MemoryService,
): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  /** The agent (404 when not the account's); a conversation named must be one of its. */
  const agentOf = async (request: FastifyRequest, agentId: string, conversationId?: string) => {
    const principal = principalOf(request);
    await agents.load(principal.accountId, agentId);
    if (conversationId !== undefined) {
      const row = await conversations.mustGet(principal, conversationId);
      if (row.agent_id !== agentId)
        throw new AppError(
          'CONVERSATION_NOT_FOUND',
          `Conversation '${conversationId}' is not one of this agent's`,
          {
            id: conversationId,
          },
        );
    }
    return principal.accountId;
  };

  r.get(
    '/api/agents/:agentId/memory/blocks',
    {
      config: keysOnly,
      schema: {
        tags,
        summary: "An agent's memory blocks, and a conversation's with conversationId",
        params: AgentParams,
        querystring: Type.Object(
          { conversationId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
          { additionalProperties: false },
        ),
        response: withErrors({ 200: MemoryBlockList }),
      },
    },
    async (request) => {
      const { conversationId } = request.query;
      const accountId = await agentOf(request, request.params.agentId, conversationId);
      return { data: await memory.list(accountId, request.params.agentId, conversationId ?? null) };
    },
  );

  r.post(
    '/api/agents/:agentId/memory/blocks',
    {
      config: keysOnly,
      schema: {
        tags,
        summary: 'Create a memory block (the agent’s, or a conversation’s with conversationId)',
        params: AgentParams,
        body: MemoryBlockBody,
        response: withErrors({ 201: MemoryBlockView }),
      },
    },
    async (request, reply) => {
      const accountId = await agentOf(request, request.params.agentId, request.body.conversationId);
      return reply.code(201).send(await memory.create(accountId, request.params.agentId, request.body));
    },
  );

  r.get(
    '/api/agents/:agentId/memory/blocks/:blockId',
    {
      config: keysOnly,
      schema: {
        tags,
        summary: 'A memory block',
        params: MemoryBlockParams,
        response: withErrors({ 200: MemoryBlockView }),
      },
    },
    async (request) => {
      const accountId = await agentOf(request, request.params.agentId);
      return memory.get(accountId, request.params.agentId, request.params.blockId);
    },
  );

  r.patch(
    '/api/agents/:agentId/memory/blocks/:blockId',
    {
      config: keysOnly,
      schema: {
        tags,
        summary: 'Change a memory block (value, limit, description)',
        params: MemoryBlockParams,
        body: MemoryBlockPatch,
        response: withErrors({ 200: MemoryBlockView }),
      },
    },
    async (request) => {
      const accountId = await agentOf(request, request.params.agentId);
      return memory.patch(accountId, request.params.agentId, request.params.blockId, request.body);
    },
  );

  r.delete(
    '/api/agents/:agentId/memory/blocks/:blockId',
    {
      config: keysOnly,
      schema: { tags, summary: 'Delete a memory block', params: MemoryBlockParams, response: withErrors({}) },
    },
    async (request, reply) => {
      const accountId = await agentOf(request, request.params.agentId);
      await memory.delete(accountId, request.params.agentId, request.params.blockId);
      return reply.code(204).send();
    },
  );

  r.get(
    '/api/agents/:agentId/memory/blocks/:blockId/history',
    {
      config: keysOnly,
      schema: {
        tags,
        summary: "A memory block's edits, newest first (the last 100)",
        params: MemoryBlockParams,
        response: withErrors({ 200: MemoryEditList }),
      },
    },
    async (request) => {
      const accountId = await agentOf(request, request.params.agentId);
      return { data: await memory.history(accountId, request.params.agentId, request.params.blockId) };
    },
  );
}
