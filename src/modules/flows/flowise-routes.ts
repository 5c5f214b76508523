import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import { AppError, notFound, validationError } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import type { FlowService } from './flow-service.js';
import type { FlowStore } from './flow-store.js';
import type { FlowiseObjects, ObjectKind, StoredObject } from './flowise/objects.js';
import { withFlowiseErrors } from './schemas.js';

export interface FlowiseRouteDeps {
  flows: FlowService;
  store: FlowStore;
  objects: FlowiseObjects;
}

const tags = ['Flows (Flowise API)'];
const flow = { auth: { service: 'flow' }, errorFormat: 'flowise' } as const;
/** Flowise's variables clash with n8n's `/api/v1/variables`: they live under Flowise's own base path. */
export const FLOWISE_BASE = '/flowise/api/v1';

const Id = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });
const Any = Type.Object({}, { additionalProperties: true });
const Text = (max: number) => Type.String({ maxLength: max });
const Dates = {
  createdDate: Type.String(),
  updatedDate: Type.String(),
};

/** A record as Flowise answers it: its fields, id and dates. */
const view = (o: StoredObject) => ({
  ...o.body,
  id: o.id,
  createdDate: o.createdAt,
  updatedDate: o.updatedAt,
});

const ToolBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Text(10_000),
    color: Type.Optional(Text(100)),
    iconSrc: Type.Optional(Type.Union([Text(2_000), Type.Null()])),
    schema: Type.Optional(Type.Union([Text(100_000), Type.Null()])),
    func: Type.Optional(Type.Union([Text(100_000), Type.Null()])),
  },
  { additionalProperties: false },
);
const ToolView = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    color: Type.String(),
    iconSrc: Type.Union([Type.String(), Type.Null()]),
    schema: Type.Union([Type.String(), Type.Null()]),
    func: Type.Union([Type.String(), Type.Null()]),
    ...Dates,
  },
  { additionalProperties: false },
);

const VariableBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_]+$' }),
    value: Type.Optional(Text(100_000)),
    type: Type.Optional(Type.Union([Type.Literal('static'), Type.Literal('runtime')])),
  },
  { additionalProperties: false },
);
const VariableView = Type.Object(
  { id: Type.String(), name: Type.String(), value: Type.String(), type: Type.String(), ...Dates },
  { additionalProperties: false },
);

const AssistantBody = Type.Object(
  {
    details: Text(200_000),
    credential: Type.Optional(Type.Union([Text(200), Type.Null()])),
    iconSrc: Type.Optional(Type.Union([Text(2_000), Type.Null()])),
    type: Type.Optional(Type.Union([Type.Literal('OPENAI'), Type.Literal('AZURE'), Type.Literal('CUSTOM')])),
  },
  { additionalProperties: false },
);
const AssistantView = Type.Object(
  {
    id: Type.String(),
    details: Type.String(),
    credential: Type.Union([Type.String(), Type.Null()]),
    iconSrc: Type.Union([Type.String(), Type.Null()]),
    type: Type.String(),
    ...Dates,
  },
  { additionalProperties: false },
);

const Rating = Type.Union([Type.Literal('THUMBS_UP'), Type.Literal('THUMBS_DOWN')]);
const FeedbackBody = Type.Object(
  {
    chatflowid: Type.String({ minLength: 1, maxLength: 200 }),
    chatId: Type.String({ minLength: 1, maxLength: 200 }),
    messageId: Type.String({ minLength: 1, maxLength: 200 }),
    rating: Rating,
    content: Type.Optional(Text(10_000)),
  },
  { additionalProperties: false },
);
const FeedbackPatch = Type.Object(
  { rating: Type.Optional(Rating), content: Type.Optional(Text(10_000)) },
  { additionalProperties: false },
);
const FeedbackView = Type.Object(
  {
    id: Type.String(),
    chatflowid: Type.String(),
    chatId: Type.String(),
    messageId: Type.String(),
    rating: Type.String(),
    content: Type.Optional(Type.String()),
    createdDate: Type.String(),
  },
  { additionalProperties: false },
);
const FlowQuery = Type.Object(
  {
    chatId: Type.Optional(Type.String({ maxLength: 200 })),
    sortOrder: Type.Optional(Type.Union([Type.Literal('ASC'), Type.Literal('DESC')])),
    order: Type.Optional(Type.Union([Type.Literal('ASC'), Type.Literal('DESC')])),
    startDate: Type.Optional(Type.String({ format: 'date-time' })),
    endDate: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: true },
);

const LeadBody = Type.Object(
  {
    chatflowid: Type.String({ minLength: 1, maxLength: 200 }),
    chatId: Type.Optional(Type.String({ maxLength: 200 })),
    name: Type.Optional(Text(500)),
    email: Type.Optional(Text(500)),
    phone: Type.Optional(Text(100)),
  },
  { additionalProperties: false },
);
const LeadView = Type.Object(
  {
    id: Type.String(),
    chatflowid: Type.String(),
    chatId: Type.String(),
    name: Type.Optional(Type.String()),
    email: Type.Optional(Type.String()),
    phone: Type.Optional(Type.String()),
    createdDate: Type.String(),
  },
  { additionalProperties: false },
);

const UpsertHistoryView = Type.Object(
  {
    id: Type.String(),
    chatflowid: Type.String(),
    result: Any,
    flowData: Any,
    date: Type.String(),
  },
  { additionalProperties: false },
);

/** Flowise's `ASC`/`DESC` (either query name) as the store's order; Flowise lists oldest first. */
const orderOf = (q: { sortOrder?: string; order?: string }): 'asc' | 'desc' =>
  (q.sortOrder ?? q.order) === 'DESC' ? 'desc' : 'asc';

/**
 * The rest of Flowise's API on the platform: ping, tools, variables (under FLOWISE_BASE), assistants,
 * feedback on answers, leads, and the upsert history, in Flowise's shapes and error body.
 */
export function flowiseRoutes(app: FastifyInstance, deps: FlowiseRouteDeps): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { objects, flows } = deps;
  const account = (request: FastifyRequest) => principalOf(request).accountId;

  r.get(
    '/api/v1/ping',
    {
      config: { public: true, limited: true, errorFormat: 'flowise' },
      schema: {
        tags,
        summary: "Flowise's health check: answers pong",
        response: withFlowiseErrors({ 200: Type.String() }),
      },
    },
    async (_request, reply) => reply.type('text/plain; charset=utf-8').send('pong'),
  );

  /** Create, list, get, update and delete of one kind under `path`. */
  const crud = <B extends TSchema, V extends TSchema>(
    path: string,
    kind: ObjectKind,
    body: B,
    shape: V,
    defaults: (b: Record<string, unknown>) => Record<string, unknown>,
    withGet = true,
  ) => {
    const label = `${kind}s`;
    r.post(
      path,
      {
        config: flow,
        schema: { tags, summary: `Create a ${kind}`, body, response: withFlowiseErrors({ 200: shape }) },
      },
      async (request) => {
        const b = request.body as Record<string, unknown>;
        return view(await objects.create(account(request), kind, defaults(b)));
      },
    );
    r.get(
      path,
      {
        config: flow,
        schema: {
          tags,
          summary: `List the ${label}`,
          response: withFlowiseErrors({ 200: Type.Array(shape) }),
        },
      },
      async (request) => (await objects.list(account(request), kind)).map(view),
    );
    if (withGet)
      r.get(
        `${path}/:id`,
        {
          config: flow,
          schema: { tags, summary: `A ${kind}`, params: Id, response: withFlowiseErrors({ 200: shape }) },
        },
        async (request) => view(await objects.get(account(request), kind, request.params.id)),
      );
    r.put(
      `${path}/:id`,
      {
        config: flow,
        schema: {
          tags,
          summary: `Update a ${kind}`,
          params: Id,
          body: Type.Partial(body as unknown as ReturnType<typeof Type.Object>),
          response: withFlowiseErrors({ 200: shape }),
        },
      },
      async (request) =>
        view(
          await objects.update(
            account(request),
            kind,
            request.params.id,
            request.body as Record<string, unknown>,
          ),
        ),
    );
    r.delete(
      `${path}/:id`,
      {
        config: flow,
        schema: {
          tags,
          summary: `Delete a ${kind}`,
          params: Id,
          response: withFlowiseErrors({ 200: Type.Object({ affected: Type.Integer() }) }),
        },
      },
      async (request) => {
        await objects.delete(account(request), kind, request.params.id);
        // TypeORM's DeleteResult, as Flowise answers it.
        return { affected: 1 };
      },
    );
  };

  crud('/api/v1/tools', 'tool', ToolBody, ToolView, (b) => ({
    name: b.name,
    description: b.description,
    color: b.color ?? '',
    iconSrc: b.iconSrc ?? null,
    schema: b.schema ?? null,
    func: b.func ?? null,
  }));
  crud(
    `${FLOWISE_BASE}/variables`,
    'variable',
    VariableBody,
    VariableView,
    (b) => ({
      name: b.name,
      value: b.value ?? '',
      type: b.type ?? 'static',
    }),
    false,
  );
  crud('/api/v1/assistants', 'assistant', AssistantBody, AssistantView, (b) => {
    try {
      JSON.parse(b.details as string);
    } catch {
      throw validationError('details must be JSON text', [{ field: 'details', message: 'is not JSON' }]);
    }
    return {
      details: b.details,
      credential: b.credential ?? null,
      iconSrc: b.iconSrc ?? null,
      type: b.type ?? 'CUSTOM',
    };
  });

  const feedbackView = (o: StoredObject) => ({
    ...o.body,
    id: o.id,
    chatflowid: o.flowId as string,
    createdDate: o.createdAt,
  });

  r.post(
    '/api/v1/feedback',
    {
      config: flow,
      schema: {
        tags,
        summary: 'Rate an answer of a chatflow (thumbs up or down, with a comment)',
        body: FeedbackBody,
        response: withFlowiseErrors({ 200: FeedbackView }),
      },
    },
    async (request) => {
      const b = request.body;
      await flows.load(account(request), b.chatflowid);
      const message = await deps.store.message(b.chatflowid, b.messageId);
      if (message?.role !== 'apiMessage') throw notFound('NOT_FOUND', 'Message', b.messageId);
      if (message.chat_id !== b.chatId)
        throw validationError('The message is not of this chat', [
          { field: 'chatId', message: `message '${b.messageId}' belongs to another chat` },
        ]);
      const body = {
        chatId: b.chatId,
        messageId: b.messageId,
        rating: b.rating,
        ...(b.content !== undefined ? { content: b.content } : {}),
      };
      return feedbackView(await objects.create(account(request), 'feedback', body, b.chatflowid));
    },
  );
  r.get(
    '/api/v1/feedback/:id',
    {
      config: flow,
      schema: {
        tags,
        summary: "A chatflow's feedback (filters: chatId, dates; sortOrder ASC or DESC)",
        params: Id,
        querystring: FlowQuery,
        response: withFlowiseErrors({ 200: Type.Array(FeedbackView) }),
      },
    },
    async (request) => {
      await flows.load(account(request), request.params.id);
      const q = request.query;
      const found = await objects.list(account(request), 'feedback', {
        flowId: request.params.id,
        order: orderOf(q),
        ...(q.startDate ? { startDate: q.startDate } : {}),
        ...(q.endDate ? { endDate: q.endDate } : {}),
      });
      return found.filter((o) => q.chatId === undefined || o.body.chatId === q.chatId).map(feedbackView);
    },
  );
  r.put(
    '/api/v1/feedback/:id',
    {
      config: flow,
      schema: {
        tags,
        summary: 'Change a feedback’s rating or comment',
        params: Id,
        body: FeedbackPatch,
        response: withFlowiseErrors({ 200: FeedbackView }),
      },
    },
    async (request) =>
      feedbackView(await objects.update(account(request), 'feedback', request.params.id, request.body)),
  );

  const leadView = (o: StoredObject) => ({
    chatId: '',
    ...o.body,
    id: o.id,
    chatflowid: o.flowId as string,
    createdDate: o.createdAt,
  });
  r.post(
    '/api/v1/leads',
    {
      config: flow,
      schema: {
        tags,
        summary: "A chat's lead (name, email, phone) for a chatflow",
        body: LeadBody,
        response: withFlowiseErrors({ 200: LeadView }),
      },
    },
    async (request) => {
      const { chatflowid, ...rest } = request.body;
      await flows.load(account(request), chatflowid);
      return leadView(await objects.create(account(request), 'lead', rest, chatflowid));
    },
  );
  r.get(
    '/api/v1/leads/:id',
    {
      config: flow,
      schema: {
        tags,
        summary: "A chatflow's leads",
        params: Id,
        response: withFlowiseErrors({ 200: Type.Array(LeadView) }),
      },
    },
    async (request) => {
      await flows.load(account(request), request.params.id);
      return (await objects.list(account(request), 'lead', { flowId: request.params.id })).map(leadView);
    },
  );

  r.get(
    '/api/v1/upsert-history/:id',
    {
      config: flow,
      schema: {
        tags,
        summary: "A chatflow's vector upserts (order ASC or DESC, dates)",
        params: Id,
        querystring: FlowQuery,
        response: withFlowiseErrors({ 200: Type.Array(UpsertHistoryView) }),
      },
    },
    async (request) => {
      await flows.load(account(request), request.params.id);
      const q = request.query;
      const found = await objects.list(account(request), 'upsert', {
        flowId: request.params.id,
        order: orderOf(q),
        ...(q.startDate ? { startDate: q.startDate } : {}),
        ...(q.endDate ? { endDate: q.endDate } : {}),
      });
      return found.map((o) => ({
        id: o.id,
        chatflowid: o.flowId as string,
        result: (o.body.result ?? {}) as Record<string, unknown>,
        flowData: (o.body.flowData ?? {}) as Record<string, unknown>,
        date: o.createdAt,
      }));
    },
  );
  r.patch(
    '/api/v1/upsert-history/:id',
    {
      config: flow,
      schema: {
        tags,
        summary: 'Delete upsert history records of a chatflow by id',
        params: Id,
        body: Type.Object(
          { ids: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 1_000 }) },
          { additionalProperties: false },
        ),
        response: withFlowiseErrors({ 200: Type.Object({ affected: Type.Integer() }) }),
      },
    },
    async (request) => {
      await flows.load(account(request), request.params.id);
      const ids = [...new Set(request.body.ids)];
      if (ids.length === 0)
        throw new AppError('VALIDATION_ERROR', 'ids must name at least one record', {
          fields: [{ field: 'ids', message: 'is empty' }],
        });
      return { affected: await objects.deleteMany(account(request), 'upsert', request.params.id, ids) };
    },
  );
}
