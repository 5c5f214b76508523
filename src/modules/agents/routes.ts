import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, validationError } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import { documentedOnly } from '../../core/http/openapi-route.js';
import { ListEnvelope, ListQuery, listQueryOf, withErrors } from '../../core/http/schemas.js';
import { clientGone, sendLines } from '../../core/http/stream-reply.js';
import { holdStreamSlot } from '../../core/http/stream-slots.js';
import type { AgentEvent } from './agent-events.js';
import { LIST_SPEC as AGENT_LIST_SPEC, type AgentService } from './agent-service.js';
import { MESSAGE_BODY_LIMIT, messageContent } from './content-parts.js';
import { CONVERSATION_LIST, type ConversationService, MESSAGE_LIST } from './conversation-service.js';
import { type AgentMessenger, events, runView, type Turn } from './messaging.js';
import {
  AgentCreateBody,
  AgentParams,
  AgentPatchBody,
  AgentView,
  ApprovalsBody,
  ConversationBody,
  ConversationDetail,
  ConversationExport,
  ConversationParams,
  ConversationPatch,
  ConversationView,
  MessageEditBody,
  MessagePage,
  MessageParams,
  MessageView,
  ResetAnswer,
  RunParams,
  RunView,
  SendAnswer,
  SendBody,
  ToolOutputsBody,
} from './schemas.js';
import type { ResponseFormat } from './structured-output.js';
import type { ClientTool } from './tool-specs.js';

export interface AgentRouteDeps {
  agents: AgentService;
  conversations: ConversationService;
  messenger: AgentMessenger;
}

const tags = ['Agents'];
/** Agents are managed with keys; conversations and messages are also a customer's (its own only). */
const keysOnly = { auth: { service: 'agent' } } as const;
const customerFacing = { auth: { service: 'agent', customerFacing: true } } as const;

/** Server-sent events: `event: <type>` and the event as JSON. */
async function* sse(stream: AsyncGenerator<AgentEvent>): AsyncGenerator<string> {
  for await (const event of stream) yield `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** A turn's answer: server-sent events, or JSON once it ends (completed or waiting for tool outputs). */
async function answer(request: FastifyRequest, reply: FastifyReply, turn: Turn, stream: boolean) {
  const signal = clientGone(reply);
  if (stream) {
    const log = (err: unknown) => request.log.error({ err }, 'agent turn failed');
    return sendLines(reply, 'text/event-stream; charset=utf-8', sse(events(turn, signal, log)));
  }
  const run = turn.run(signal);
  for (;;) {
    const next = await run.next();
    if (!next.done) continue;
    const outcome = next.value;
    const base = {
      conversationId: turn.conversationId,
      runId: turn.runId,
      status: outcome.status,
      usage: outcome.usage,
      sources: outcome.sources,
    };
    const asked = turn.userMessage ? [turn.userMessage] : [];
    if (outcome.status === 'requires_action')
      return {
        ...base,
        messages: asked,
        requiredAction: {
          type:
            outcome.toolCalls.length > 0 ? ('submit_tool_outputs' as const) : ('approve_tool_calls' as const),
          toolCalls: outcome.toolCalls,
          approvals: outcome.approvals,
        },
      };
    return {
      ...base,
      messages: [...asked, outcome.message],
      ...(outcome.output !== undefined ? { output: outcome.output } : {}),
    };
  }
}

export function agentRoutes(app: FastifyInstance, deps: AgentRouteDeps): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { agents, conversations, messenger } = deps;
  const account = (request: FastifyRequest) => principalOf(request).accountId;

  r.post(
    '/api/agents',
    {
      config: keysOnly,
      schema: {
        tags,
        summary: 'Create an agent (its model, topics and tools are checked)',
        body: AgentCreateBody,
        response: withErrors({ 201: AgentView }),
      },
    },
    async (request, reply) => reply.code(201).send(await agents.create(principalOf(request), request.body)),
  );

  r.get(
    '/api/agents',
    {
      config: keysOnly,
      schema: {
        tags,
        summary: "The account's agents",
        querystring: listQueryOf(AGENT_LIST_SPEC),
        response: withErrors({ 200: ListEnvelope(AgentView) }),
      },
    },
    async (request) => agents.list(account(request), request.query),
  );

  r.get(
    '/api/agents/:agentId',
    {
      config: keysOnly,
      schema: { tags, summary: 'An agent', params: AgentParams, response: withErrors({ 200: AgentView }) },
    },
    async (request) => agents.get(account(request), request.params.agentId),
  );

  r.patch(
    '/api/agents/:agentId',
    {
      config: keysOnly,
      schema: {
        tags,
        summary: 'Change an agent (the fields sent)',
        params: AgentParams,
        body: AgentPatchBody,
        response: withErrors({ 200: AgentView }),
      },
    },
    async (request) => agents.patch(principalOf(request), request.params.agentId, request.body),
  );

  r.delete(
    '/api/agents/:agentId',
    {
      config: keysOnly,
      schema: {
        tags,
        summary: 'Delete an agent (its conversations stay)',
        params: AgentParams,
        response: withErrors({}),
      },
    },
    async (request, reply) => {
      await agents.delete(account(request), request.params.agentId);
      return reply.code(204).send();
    },
  );

  r.post(
    '/api/agents/:agentId/messages',
    {
      config: customerFacing,
      bodyLimit: MESSAGE_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Send a message; the agent answers (server-sent events with stream: true)',
        params: AgentParams,
        body: SendBody,
        response: withErrors({ 200: SendAnswer, 202: RunView }),
      },
    },
    async (request, reply) => {
      const { conversationId, content, images, stream, background, tools, toolChoice, responseFormat } =
        request.body;
      const parts = messageContent(content, images);
      if (parts.text === '' && parts.images.length === 0 && parts.files.length === 0)
        throw validationError('Invalid message content', [
          { field: 'content', message: 'has no text, no image and no file' },
        ]);
      const input = {
        content: parts.text,
        ...(parts.images.length > 0 ? { images: parts.images } : {}),
        ...(parts.files.length > 0 ? { files: parts.files } : {}),
        ...(parts.notes.length > 0 ? { attachmentNotes: parts.notes } : {}),
        ...(parts.firstImage ? { firstImage: parts.firstImage } : {}),
        ...(parts.firstFile ? { firstFile: parts.firstFile } : {}),
        ...(conversationId !== undefined ? { conversationId } : {}),
        ...(tools ? { tools: tools as ClientTool[] } : {}),
        ...(toolChoice ? { toolChoice } : {}),
        ...(responseFormat ? { responseFormat: responseFormat as ResponseFormat } : {}),
      };
      if (background) {
        if (stream)
          throw validationError('A background turn is polled, not streamed', [
            { field: 'stream', message: 'cannot be true with background: true' },
          ]);
        const queued = await messenger.begin(principalOf(request), request.params.agentId, input, {
          background: true,
        });
        return reply.code(202).send(runView(queued.queued));
      }
      if (stream) holdStreamSlot(request, reply);
      const turn = await messenger.begin(principalOf(request), request.params.agentId, input);
      return answer(request, reply, turn, stream === true);
    },
  );

  r.post(
    '/api/agents/:agentId/runs/:runId/tool-outputs',
    {
      config: customerFacing,
      schema: {
        tags,
        summary:
          "Submit a paused run's client tool outputs; the turn continues (server-sent events with stream: true)",
        params: RunParams,
        body: ToolOutputsBody,
        response: withErrors({ 200: SendAnswer }),
      },
    },
    async (request, reply) => {
      const { agentId, runId } = request.params;
      const { toolOutputs, stream } = request.body;
      if (stream) holdStreamSlot(request, reply);
      const turn = await messenger.submitToolOutputs(principalOf(request), agentId, runId, toolOutputs);
      return answer(request, reply, turn, stream === true);
    },
  );

  r.post(
    '/api/agents/:agentId/runs/:runId/approvals',
    {
      // Approval is the account's oversight of its agents: its keys and members, not a customer token.
      config: keysOnly,
      schema: {
        tags,
        summary:
          "Approve or reject a paused run's calls to tools that need approval; once none waits the turn continues (server-sent events with stream: true)",
        params: RunParams,
        body: ApprovalsBody,
        response: withErrors({ 200: SendAnswer }),
      },
    },
    async (request, reply) => {
      const { agentId, runId } = request.params;
      const { approvals, stream } = request.body;
      if (stream) holdStreamSlot(request, reply);
      const decisions = approvals.map((a) => ({
        toolCallId: a.toolCallId,
        approve: a.approve,
        ...(a.reason ? { reason: a.reason } : {}),
      }));
      const turn = await messenger.approve(principalOf(request), agentId, runId, decisions);
      return answer(request, reply, turn, stream === true);
    },
  );

  r.post(
    '/api/agents/:agentId/runs/:runId/cancel',
    {
      config: customerFacing,
      schema: {
        tags,
        summary: 'Cancel a run waiting for tool outputs, or a background run not yet ended',
        params: RunParams,
        // No body; an empty JSON object is accepted as clients send one.
        body: Type.Optional(Type.Object({}, { additionalProperties: false })),
        response: withErrors({ 200: RunView }),
      },
    },
    async (request) => {
      const { agentId, runId } = request.params;
      return runView(await messenger.cancel(principalOf(request), agentId, runId));
    },
  );

  r.get(
    '/api/agents/:agentId/runs/:runId',
    {
      config: customerFacing,
      schema: {
        tags,
        summary: 'A run: its status and the tool calls it waits for',
        params: RunParams,
        response: withErrors({ 200: RunView }),
      },
    },
    async (request) =>
      runView(await messenger.mustGetRun(principalOf(request), request.params.agentId, request.params.runId)),
  );

  r.get(
    '/api/agents/:agentId/messages',
    {
      config: customerFacing,
      schema: {
        tags,
        summary: "A conversation's messages, oldest first (conversationId required)",
        params: AgentParams,
        // conversationId: declared so the document shows it, required in the document only (the
        // handler's own 400 names it); validation is the shared list query's, as before.
        querystring: listQueryOf(
          MESSAGE_LIST,
          Type.Object(
            { ...ListQuery.properties, conversationId: Type.Optional(Type.String()) },
            { additionalProperties: Type.String(), ...documentedOnly({ required: ['conversationId'] }) },
          ),
        ),
        response: withErrors({ 200: MessagePage }),
      },
    },
    async (request) => {
      const { conversationId, ...rest } = request.query as Record<string, unknown>;
      if (typeof conversationId !== 'string' || conversationId === '')
        throw new AppError('VALIDATION_ERROR', 'conversationId is required', {
          fields: [{ field: 'conversationId', message: 'is required' }],
        });
      const principal = principalOf(request);
      const row = await conversations.mustGet(principal, conversationId);
      if (row.agent_id !== request.params.agentId)
        throw new AppError(
          'CONVERSATION_NOT_FOUND',
          `Conversation '${conversationId}' is not one of this agent's`,
          {
            id: conversationId,
          },
        );
      return conversations.messages(row.id, rest);
    },
  );

  r.post(
    '/api/conversations',
    {
      config: customerFacing,
      schema: {
        tags,
        summary: 'Open a conversation with an agent',
        body: ConversationBody,
        response: withErrors({ 201: ConversationView }),
      },
    },
    async (request, reply) =>
      reply.code(201).send(await conversations.create(principalOf(request), request.body)),
  );

  r.get(
    '/api/conversations',
    {
      config: customerFacing,
      schema: {
        tags,
        summary: 'Conversations (filters agentId, userId); a customer token sees its own',
        querystring: listQueryOf(CONVERSATION_LIST),
        response: withErrors({ 200: ListEnvelope(ConversationView) }),
      },
    },
    async (request) => conversations.list(principalOf(request), request.query),
  );

  r.patch(
    '/api/conversations/:id',
    {
      config: customerFacing,
      schema: {
        tags,
        summary: "Change a conversation's title or metadata (a customer token: its own)",
        params: ConversationParams,
        body: ConversationPatch,
        response: withErrors({ 200: ConversationView }),
      },
    },
    async (request) => conversations.update(principalOf(request), request.params.id, request.body),
  );

  r.get(
    '/api/conversations/:id',
    {
      config: customerFacing,
      schema: {
        tags,
        summary: 'A conversation with its messages (paged, oldest first)',
        params: ConversationParams,
        querystring: listQueryOf(MESSAGE_LIST),
        response: withErrors({ 200: ConversationDetail }),
      },
    },
    async (request) => conversations.get(principalOf(request), request.params.id, request.query),
  );

  r.get(
    '/api/conversations/:id/export',
    {
      config: customerFacing,
      schema: {
        tags,
        summary: 'A conversation and all its messages as one JSON document',
        params: ConversationParams,
        response: withErrors({ 200: ConversationExport }),
      },
    },
    async (request, reply) => {
      const doc = await conversations.export(principalOf(request), request.params.id);
      return reply
        .header('content-disposition', `attachment; filename="${doc.conversation.id}.json"`)
        .send(doc);
    },
  );

  r.patch(
    '/api/conversations/:id/messages/:messageId',
    {
      config: customerFacing,
      schema: {
        tags,
        summary: "Edit a message's text (later turns read it so); 409 while a turn runs or waits",
        params: MessageParams,
        body: MessageEditBody,
        response: withErrors({ 200: MessageView }),
      },
    },
    async (request) =>
      conversations.editMessage(
        principalOf(request),
        request.params.id,
        request.params.messageId,
        request.body.content,
      ),
  );

  r.delete(
    '/api/conversations/:id/messages/:messageId',
    {
      config: customerFacing,
      schema: {
        tags,
        summary: 'Delete a message; 409 while a turn runs or waits',
        params: MessageParams,
        response: withErrors({}),
      },
    },
    async (request, reply) => {
      await conversations.deleteMessage(principalOf(request), request.params.id, request.params.messageId);
      return reply.code(204).send();
    },
  );

  r.delete(
    '/api/conversations/:id/messages',
    {
      config: customerFacing,
      schema: {
        tags,
        summary:
          'Reset a conversation: delete all its messages (it and its memory blocks stay); 409 while a turn runs or waits',
        params: ConversationParams,
        response: withErrors({ 200: ResetAnswer }),
      },
    },
    async (request) => ({
      deleted: await conversations.resetMessages(principalOf(request), request.params.id),
    }),
  );

  r.delete(
    '/api/conversations/:id',
    {
      config: customerFacing,
      schema: {
        tags,
        summary: 'Delete a conversation and its messages',
        params: ConversationParams,
        response: withErrors({}),
      },
    },
    async (request, reply) => {
      await conversations.delete(principalOf(request), request.params.id);
      return reply.code(204).send();
    },
  );
}
