import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, validationError } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import { withErrors } from '../../core/http/schemas.js';
import type { AgentService } from './agent-service.js';
import type { ArchivalMemory } from './archival-memory.js';
import type { ConversationService } from './conversation-service.js';
import type { MemoryService } from './memory-service.js';
import {
  AgentFile,
  AgentParams,
  AgentView,
  ArchivalBody,
  ArchivalList,
  ArchivalParams,
  ArchivalQuery,
  ArchivalView,
  MemoryBlockBody,
  MemoryBlockList,
  MemoryBlockParams,
  MemoryBlockPatch,
  MemoryBlockView,
  MemoryEditList,
} from './schemas.js';

const tags = ['Agents'];
const keysOnly = { auth: { service: 'agent' } } as const;

/**
 * `/api/agents/{agentId}/memory/blocks`: an agent's memory blocks and their edit history, and
 * `/api/agents/{agentId}/memory/archival`: its archival passages (keys only).
 */
export function memoryRoutes(
  app: FastifyInstance,
  agents: AgentService,
  conversations: ConversationService,
  memory: MemoryService,
  archival: ArchivalMemory | null,
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
        summary:
          "An agent's memory blocks, with a conversation's (conversationId) and a user's (userId) as a turn reads them",
        params: AgentParams,
        querystring: Type.Object(
          {
            conversationId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
            userId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          },
          { additionalProperties: false },
        ),
        response: withErrors({ 200: MemoryBlockList }),
      },
    },
    async (request) => {
      const { conversationId, userId } = request.query;
      const accountId = await agentOf(request, request.params.agentId, conversationId);
      return {
        data: await memory.list(accountId, request.params.agentId, conversationId ?? null, userId ?? null),
      };
    },
  );

  r.post(
    '/api/agents/:agentId/memory/blocks',
    {
      config: keysOnly,
      schema: {
        tags,
        summary:
          'Create a memory block (the agent’s, a conversation’s with conversationId, a user’s with userId)',
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

  r.get(
    '/api/agents/:agentId/export',
    {
      config: keysOnly,
      schema: {
        tags,
        summary: 'An agent as a JSON file: its definition and its own memory blocks',
        params: AgentParams,
        response: withErrors({ 200: AgentFile }),
      },
    },
    async (request, reply) => {
      const accountId = principalOf(request).accountId;
      const agent = await agents.get(accountId, request.params.agentId);
      const blocks = await memory.list(accountId, agent.id, null);
      reply.header('content-disposition', `attachment; filename="${agent.id}.agent.json"`);
      return {
        format: 'agent' as const,
        version: 1 as const,
        exportedAt: new Date().toISOString(),
        agent: {
          name: agent.name,
          instructions: agent.instructions,
          model: agent.model,
          knowledgeTopics: agent.knowledgeTopics,
          tools: agent.tools as never,
          temperature: agent.temperature,
          maxToolCalls: agent.maxToolCalls,
          requiresApproval: agent.requiresApproval,
          approvalTimeoutSeconds: agent.approvalTimeoutSeconds,
          approvalTimeouts: agent.approvalTimeouts,
        },
        memoryBlocks: blocks.map((b) => ({
          label: b.label,
          value: b.value,
          limit: b.limit,
          description: b.description,
        })),
      };
    },
  );

  r.post(
    '/api/agents/import',
    {
      config: keysOnly,
      schema: {
        tags,
        summary:
          'Create an agent from a JSON file of GET …/export (checked as a new agent), with its memory blocks',
        body: AgentFile,
        response: withErrors({ 201: AgentView }),
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      // The blocks are checked first: a file refused is refused whole (no agent without its memory).
      const labels = new Set<string>();
      const problems: Array<{ field: string; message: string }> = [];
      for (const [i, b] of (request.body.memoryBlocks ?? []).entries()) {
        if (b.value.length > b.limit)
          problems.push({ field: `memoryBlocks[${i}].value`, message: `is over its limit of ${b.limit}` });
        if (labels.has(b.label))
          problems.push({ field: `memoryBlocks[${i}].label`, message: `'${b.label}' appears twice` });
        labels.add(b.label);
      }
      if (problems.length > 0) throw validationError('Invalid agent file', problems);
      const agent = await agents.create(principal, request.body.agent);
      for (const block of request.body.memoryBlocks ?? [])
        await memory.create(principal.accountId, agent.id, {
          label: block.label,
          value: block.value,
          limit: block.limit,
          ...(block.description ? { description: block.description } : {}),
        });
      return reply.code(201).send(agent);
    },
  );

  const archivalOf = (): ArchivalMemory => {
    if (!archival)
      throw new AppError('SERVICE_UNAVAILABLE', 'Archival memory needs the knowledge base, not enabled here');
    return archival;
  };

  r.get(
    '/api/agents/:agentId/memory/archival',
    {
      config: keysOnly,
      schema: {
        tags,
        summary: "An agent's archival passages (and a conversation's or user's), newest first or by search",
        params: AgentParams,
        querystring: ArchivalQuery,
        response: withErrors({ 200: ArchivalList }),
      },
    },
    async (request) => {
      const { conversationId, userId, search, limit = 50, order = 'desc', cursor } = request.query;
      const principal = principalOf(request);
      await agentOf(request, request.params.agentId, conversationId);
      const scope = { conversationId: conversationId ?? null, userId: userId ?? null };
      if (search === undefined)
        return archivalOf().list(principal.accountId, request.params.agentId, scope, {
          limit,
          order,
          ...(cursor ? { cursor } : {}),
        });
      const data = await archivalOf().search(
        { accountId: principal.accountId, keyId: principal.keyId },
        request.params.agentId,
        scope,
        search,
        limit,
      );
      return { data, nextCursor: null };
    },
  );

  r.post(
    '/api/agents/:agentId/memory/archival',
    {
      config: keysOnly,
      schema: {
        tags,
        summary: 'Insert an archival passage (the agent’s, or a conversation’s or user’s)',
        description:
          '201 the passage; the same text again in the same scope answers the stored passage (200). ' +
          'The text becomes a knowledge-base document of the topic `agent-archival:<agentId>…`.',
        params: AgentParams,
        body: ArchivalBody,
        response: withErrors({ 200: ArchivalView, 201: ArchivalView }),
      },
    },
    async (request, reply) => {
      const { text, conversationId, userId } = request.body;
      if (conversationId !== undefined && userId !== undefined)
        throw validationError('A passage belongs to one scope', [
          { field: 'userId', message: 'give conversationId or userId, not both' },
        ]);
      const principal = principalOf(request);
      await agentOf(request, request.params.agentId, conversationId);
      const { created, passage } = await archivalOf().insert(
        { accountId: principal.accountId, keyId: principal.keyId },
        request.params.agentId,
        { conversationId: conversationId ?? null, userId: userId ?? null },
        text,
        'api',
      );
      return reply.code(created ? 201 : 200).send(passage);
    },
  );

  r.get(
    '/api/agents/:agentId/memory/archival/:passageId',
    {
      config: keysOnly,
      schema: {
        tags,
        summary: 'An archival passage',
        params: ArchivalParams,
        response: withErrors({ 200: ArchivalView }),
      },
    },
    async (request) => {
      const accountId = await agentOf(request, request.params.agentId);
      return archivalOf().get(accountId, request.params.agentId, request.params.passageId);
    },
  );

  r.delete(
    '/api/agents/:agentId/memory/archival/:passageId',
    {
      config: keysOnly,
      schema: {
        tags,
        summary: 'Delete an archival passage (and its knowledge-base document)',
        params: ArchivalParams,
        response: withErrors({}),
      },
    },
    async (request, reply) => {
      const accountId = await agentOf(request, request.params.agentId);
      await archivalOf().delete(accountId, request.params.agentId, request.params.passageId);
      return reply.code(204).send();
    },
  );
}
