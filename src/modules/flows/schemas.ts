import { type Static, type TSchema, Type } from 'typebox';
import { Nullable } from '../../core/http/schemas.js';

/** Definition fields `overrideConfig` may change, when the flow lists them in `overridableFields`. */
const OVERRIDABLE_FIELDS = [
  'systemPrompt',
  'promptTemplate',
  'model',
  'temperature',
  'maxTokens',
  'topK',
  'minScore',
  'topics',
] as const;
export type OverridableField = (typeof OVERRIDABLE_FIELDS)[number];

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Topic = Type.String({ minLength: 1, maxLength: 200 });
const Template = Type.String({ maxLength: 20_000 });

const Memory = Type.Object(
  {
    type: Type.Enum(['none', 'window'] as const),
    windowSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
  },
  { additionalProperties: false },
);

const RateLimit = Type.Object(
  {
    limitMax: Type.Integer({ minimum: 1, maximum: 100_000 }),
    /** Seconds. */
    limitDuration: Type.Integer({ minimum: 1, maximum: 86_400 }),
    limitMsg: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

/** The fields of a definition, all optional (PUT may send a part; POST's required ones are checked after). */
const definitionFields = {
  name: Name,
  kind: Type.Enum(['llm', 'rag', 'workflow'] as const),
  // Nullable: GET answers null for an unset one, and a client may PUT back what it read.
  model: Nullable(Type.String({ minLength: 1, maxLength: 200 })),
  systemPrompt: Template,
  promptTemplate: Template,
  topics: Type.Array(Topic, { maxItems: 10 }),
  topK: Type.Integer({ minimum: 1, maximum: 20 }),
  minScore: Nullable(Type.Number()),
  temperature: Nullable(Type.Number({ minimum: 0, maximum: 2 })),
  maxTokens: Nullable(Type.Integer({ minimum: 1, maximum: 32_768 })),
  memory: Memory,
  workflowId: Nullable(Type.String({ minLength: 1, maxLength: 100 })),
  overridableFields: Type.Array(Type.Enum(OVERRIDABLE_FIELDS), { maxItems: OVERRIDABLE_FIELDS.length }),
  isStreaming: Type.Boolean(),
  rateLimit: Nullable(RateLimit),
};

type Fields = typeof definitionFields;
const optional = <K extends keyof Fields>(keys: readonly K[]) =>
  Object.fromEntries(keys.map((k) => [k, Type.Optional(definitionFields[k] as TSchema)])) as {
    [P in K]: ReturnType<typeof Type.Optional<Fields[P]>>;
  };
const ALL = Object.keys(definitionFields) as (keyof Fields)[];

/** Fields of a flow as GET answers them, echoed back by clients that PUT what they read. */
const readOnlyEcho = {
  id: Type.Optional(Type.String()),
  type: Type.Optional(Type.String()),
  createdDate: Type.Optional(Type.String()),
  updatedDate: Type.Optional(Type.String()),
};

/** Flowise's chatflow fields: its canvas (converted and kept), and settings accepted and not used. */
const FlowiseText = Type.Optional(Nullable(Type.String({ maxLength: 100_000 })));
const flowiseFields = {
  // null (as GET answers for a flow made without one) leaves the flow's canvas as it is.
  flowData: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 2_000_000,
        description: "Flowise's canvas JSON (nodes, edges)",
      }),
    ),
  ),
  deployed: Type.Optional(Nullable(Type.Boolean())),
  isPublic: Type.Optional(Nullable(Type.Boolean())),
  chatbotConfig: FlowiseText,
  apiConfig: FlowiseText,
  analytic: FlowiseText,
  speechToText: FlowiseText,
  followUpPrompts: FlowiseText,
  category: FlowiseText,
};

export const FlowBody = Type.Object(
  { ...optional(ALL), ...readOnlyEcho, ...flowiseFields },
  {
    additionalProperties: false,
    description: "A flow definition (POST: name, and kind or Flowise's flowData, required)",
  },
);
export type FlowBodyT = Static<typeof FlowBody>;

export const FlowView = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    kind: definitionFields.kind,
    model: Nullable(Type.String()),
    systemPrompt: Type.String(),
    promptTemplate: Type.String(),
    topics: Type.Array(Type.String()),
    topK: Type.Integer(),
    minScore: Nullable(Type.Number()),
    temperature: Nullable(Type.Number()),
    maxTokens: Nullable(Type.Integer()),
    memory: Type.Object({ type: Type.String(), windowSize: Type.Integer() }),
    workflowId: Nullable(Type.String()),
    overridableFields: Type.Array(Type.String()),
    isStreaming: Type.Boolean(),
    rateLimit: Nullable(RateLimit),
    // Absent from the list: a canvas may be 2 MB and an account holds 1,000 flows.
    flowData: Type.Optional(Nullable(Type.String())),
    type: Type.Literal('CHATFLOW'),
    createdDate: Type.String(),
    updatedDate: Type.String(),
  },
  { $id: 'FlowView' },
);

export const FlowParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

const HistoryEntry = Type.Object(
  {
    role: Type.Optional(Type.Enum(['apiMessage', 'userMessage'] as const)),
    type: Type.Optional(Type.Enum(['apiMessage', 'userMessage'] as const)),
    content: Type.Optional(Type.String({ maxLength: 100_000 })),
    message: Type.Optional(Type.String({ maxLength: 100_000 })),
  },
  { additionalProperties: true },
);

/**
 * Flowise's prediction body. Unknown fields are accepted and ignored, as Flowise does (the SDK sends
 * `chatflowId`; the embed widget `leadEmail`, `action`).
 */
export const PredictionBody = Type.Object(
  {
    question: Type.String({ minLength: 1, maxLength: 100_000 }),
    history: Type.Optional(Type.Array(HistoryEntry, { maxItems: 100 })),
    overrideConfig: Type.Optional(Type.Object({}, { additionalProperties: true })),
    streaming: Type.Optional(Type.Boolean()),
    chatId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    sessionId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    uploads: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 20 })),
  },
  { additionalProperties: true },
);
export type PredictionBodyT = Static<typeof PredictionBody>;

const SourceDocument = Type.Object({
  pageContent: Type.String(),
  metadata: Type.Object(
    {
      documentId: Type.String(),
      title: Nullable(Type.String()),
      pageNumber: Type.Integer(),
      score: Type.Number(),
      topic: Type.String(),
    },
    { additionalProperties: true },
  ),
});

const UsedTool = Type.Object(
  {
    tool: Type.String(),
    toolInput: Type.Unknown(),
    toolOutput: Type.Unknown(),
    error: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const PredictionView = Type.Object({
  text: Type.String(),
  question: Type.String(),
  chatId: Type.String(),
  chatMessageId: Type.String(),
  sessionId: Type.String(),
  memoryType: Type.String(),
  sourceDocuments: Type.Array(SourceDocument),
  /** The tools a Tool Agent ran (Flowise's), only when it ran some. */
  usedTools: Type.Optional(Type.Array(UsedTool)),
  executionId: Type.Optional(Type.String()),
});

export const StreamingView = Type.Object({ isStreaming: Type.Boolean() });

const DateParam = Type.String({ minLength: 1, maxLength: 40 });
const Order = Type.Enum(['ASC', 'DESC', 'asc', 'desc'] as const);

export const MessageQuery = Type.Object(
  {
    chatId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    sessionId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    sort: Type.Optional(Order),
    order: Type.Optional(Order),
    startDate: Type.Optional(DateParam),
    endDate: Type.Optional(DateParam),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    // Flowise's other filters, accepted: every message here is EXTERNAL, from the API.
    chatType: Type.Optional(Type.String({ maxLength: 20 })),
    memoryType: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);
export type MessageQueryT = Static<typeof MessageQuery>;

export const MessageView = Type.Object({
  id: Type.String(),
  role: Type.Enum(['userMessage', 'apiMessage'] as const),
  chatflowid: Type.String(),
  content: Type.String(),
  sourceDocuments: Nullable(Type.String()),
  usedTools: Nullable(Type.String()),
  chatType: Type.Literal('EXTERNAL'),
  chatId: Type.String(),
  sessionId: Type.String(),
  memoryType: Nullable(Type.String()),
  createdDate: Type.String(),
});

/** JSON upsert; a multipart one (Flowise's `files`) is read into the same shape before validation. */
export const UpsertBody = Type.Object(
  {
    documents: Type.Optional(
      Type.Array(
        Type.Object(
          {
            pageContent: Type.String({ minLength: 1 }),
            metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: 100 },
      ),
    ),
    files: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 300 }),
            type: Type.String({ maxLength: 200 }),
            data: Type.String({ description: 'base64' }),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: 20 },
      ),
    ),
    topic: Type.Optional(Topic),
    stopNodeId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: "Flowise's vector store node to upsert into",
      }),
    ),
    chunkSize: Type.Optional(Type.Integer({ minimum: 50, maximum: 20_000 })),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    overrideConfig: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          "The canvas's loader inputs for this upsert (url, selector, limit, relativeLinksMethod, method, headers, body, metadata, chunkSize; repoLink, branch, recursive, githubInstanceApi, ignorePath), by name or per node id",
      }),
    ),
  },
  { additionalProperties: false },
);

export const UpsertView = Type.Object({
  numAdded: Type.Integer(),
  numUpdated: Type.Integer(),
  numSkipped: Type.Integer(),
  numDeleted: Type.Integer(),
  addedDocs: Type.Array(
    Type.Object({
      documentId: Type.String(),
      title: Nullable(Type.String()),
      status: Type.String(),
      chunkCount: Type.Integer(),
    }),
  ),
});

/** Flowise's error body with the platform's fields beside it. */
const FlowiseErrorBody = Type.Object(
  {
    statusCode: Type.Integer(),
    success: Type.Literal(false),
    error: Type.Literal(true),
    code: Type.String(),
    message: Type.String(),
    details: Type.Object({}, { additionalProperties: true }),
    requestId: Type.String(),
  },
  { $id: 'FlowiseErrorBody', description: 'Error (Flowise shape)' },
);

export function withFlowiseErrors<T extends Record<number, TSchema>>(
  success: T,
): T & Record<'4xx' | '5xx', TSchema> {
  return { ...success, '4xx': FlowiseErrorBody, '5xx': FlowiseErrorBody };
}
