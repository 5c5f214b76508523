import { type Static, Type } from 'typebox';
import { Nullable, Timestamp } from '../../core/http/schemas.js';
import { ContentPart, MAX_IMAGES } from './content-parts.js';

const Name = Type.String({ minLength: 1, maxLength: 200 });

/** A tool by name, or a workflow tool with the schema its arguments must follow. */
const ToolSpecBody = Type.Union([
  Type.String({
    minLength: 1,
    maxLength: 120,
    description:
      'knowledge_search, user_profile, blend_recommendations, memory_append, memory_replace, archival_memory_insert, archival_memory_search or workflow:<id>',
  }),
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 120, pattern: '^workflow:' }),
      description: Type.Optional(Type.String({ maxLength: 1_000 })),
      parameters: Type.Optional(
        Type.Object({}, { additionalProperties: true, description: 'JSON schema of the arguments' }),
      ),
    },
    { additionalProperties: false },
  ),
]);

/** An MCP server whose tools become the agent's (listed when the agent is saved). */
const McpToolBody = Type.Object(
  {
    type: Type.Literal('mcp'),
    name: Type.String({
      minLength: 5,
      maxLength: 36,
      pattern: '^mcp:[A-Za-z0-9_-]{1,32}$',
      description: "mcp:<label>; the label prefixes the tools' function names",
    }),
    url: Type.String({
      minLength: 8,
      maxLength: 2_000,
      pattern: '^https?://',
      description: 'Streamable HTTP endpoint',
    }),
    credential: Type.Optional(
      Type.Object(
        {
          header: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9-]+$' }),
          value: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 8_000,
              description: 'Stored encrypted, never shown; omit it to keep the stored one',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    include: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
        maxItems: 64,
        description: "Only these of the server's tools (default: all)",
      }),
    ),
  },
  { additionalProperties: false },
);

/** A function tool the client runs: the turn stops with its calls pending until their outputs arrive. */
export const ClientToolBody = Type.Object(
  {
    type: Type.Literal('function'),
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }),
    description: Type.Optional(Type.String({ maxLength: 1_000 })),
    parameters: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: 'JSON schema of the arguments' }),
    ),
  },
  { additionalProperties: false },
);

const agentFields = {
  name: Name,
  instructions: Type.String({ maxLength: 20_000 }),
  model: Type.String({ minLength: 1, maxLength: 200 }),
  knowledgeTopics: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 10 }),
  tools: Type.Array(Type.Union([ToolSpecBody, McpToolBody, ClientToolBody]), { maxItems: 20 }),
  temperature: Nullable(Type.Number({ minimum: 0, maximum: 2 })),
  maxToolCalls: Type.Integer({ minimum: 0, maximum: 10 }),
  requiresApproval: Type.Array(Type.String({ minLength: 1, maxLength: 300 }), {
    maxItems: 20,
    description:
      "Tools whose calls wait for a caller's approval (POST …/runs/{runId}/approvals): names of the agent's tools, `mcp:<server>` for all of a server's",
  }),
  approvalTimeoutSeconds: Nullable(
    Type.Integer({
      minimum: 1,
      maximum: 2_592_000,
      description:
        'How long a call waits for approval before it is rejected (null: the server default, AGENT_APPROVAL_TIMEOUT_SECONDS)',
    }),
  ),
  approvalTimeouts: Type.Record(
    Type.String({ minLength: 1, maxLength: 300 }),
    Type.Integer({ minimum: 1, maximum: 2_592_000 }),
    {
      maxProperties: 20,
      description: 'Seconds per tool of requiresApproval (overrides approvalTimeoutSeconds)',
    },
  ),
};

export const AgentCreateBody = Type.Object(
  {
    name: agentFields.name,
    instructions: Type.Optional(agentFields.instructions),
    model: agentFields.model,
    knowledgeTopics: Type.Optional(agentFields.knowledgeTopics),
    tools: Type.Optional(agentFields.tools),
    temperature: Type.Optional(agentFields.temperature),
    maxToolCalls: Type.Optional(agentFields.maxToolCalls),
    requiresApproval: Type.Optional(agentFields.requiresApproval),
    approvalTimeoutSeconds: Type.Optional(agentFields.approvalTimeoutSeconds),
    approvalTimeouts: Type.Optional(agentFields.approvalTimeouts),
  },
  { additionalProperties: false },
);
export type AgentCreateBodyT = Static<typeof AgentCreateBody>;

export const AgentPatchBody = Type.Partial(Type.Object(agentFields), {
  additionalProperties: false,
  minProperties: 1,
});
export type AgentPatchBodyT = Static<typeof AgentPatchBody>;

const McpToolView = Type.Object({
  type: Type.Literal('mcp'),
  name: Type.String(),
  url: Type.String(),
  credential: Type.Optional(Type.Object({ header: Type.String() })),
  include: Type.Optional(Type.Array(Type.String())),
  tools: Type.Array(Type.Object({ name: Type.String(), description: Type.Optional(Type.String()) })),
});

const ToolView = Type.Object({
  name: Type.String(),
  description: Type.Optional(Type.String()),
  parameters: Type.Optional(Type.Object({}, { additionalProperties: true })),
});

export const AgentView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  instructions: Type.String(),
  model: Type.String(),
  knowledgeTopics: Type.Array(Type.String()),
  tools: Type.Array(Type.Union([Type.String(), McpToolView, ToolView, ClientToolBody])),
  temperature: Nullable(Type.Number()),
  maxToolCalls: Type.Integer(),
  requiresApproval: Type.Array(Type.String()),
  approvalTimeoutSeconds: Nullable(Type.Integer()),
  approvalTimeouts: Type.Record(Type.String(), Type.Integer()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const AgentParams = Type.Object({ agentId: Type.String({ minLength: 1, maxLength: 100 }) });
export const ConversationParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

export const ConversationBody = Type.Object(
  {
    agentId: Type.String({ minLength: 1, maxLength: 100 }),
    userId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
export type ConversationBodyT = Static<typeof ConversationBody>;

export const ConversationPatch = Type.Object(
  {
    title: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 300 }))),
    metadata: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'Replaces the metadata whole' }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const ConversationView = Type.Object({
  id: Type.String(),
  agentId: Nullable(Type.String()),
  userId: Nullable(Type.String()),
  title: Nullable(Type.String()),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Usage = Type.Object({ promptTokens: Type.Integer(), completionTokens: Type.Integer() });

const Source = Type.Object({
  documentId: Type.String(),
  title: Nullable(Type.String()),
  topic: Type.String(),
  pageNumber: Type.Integer(),
  score: Type.Number(),
  text: Type.String(),
});

const Step = Type.Object({
  type: Type.Enum(['retrieval', 'tool_call', 'model'] as const),
  name: Type.String(),
  input: Type.Unknown(),
  output: Type.Unknown(),
  ms: Type.Number(),
});

export const MessageView = Type.Object({
  id: Type.String(),
  conversationId: Type.String(),
  role: Type.Enum(['user', 'assistant', 'tool'] as const),
  content: Type.String(),
  steps: Type.Array(Step),
  sources: Type.Array(Source),
  usage: Nullable(Usage),
  createdAt: Timestamp,
});

export const MessagePage = Type.Object({
  data: Type.Array(MessageView),
  nextCursor: Nullable(Type.String()),
});

export const MessageParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  messageId: Type.String({ minLength: 1, maxLength: 100 }),
});

export const MessageEditBody = Type.Object(
  { content: Type.String({ minLength: 1, maxLength: 32_000 }) },
  { additionalProperties: false },
);

/** A reset conversation: how many messages were deleted. */
export const ResetAnswer = Type.Object({ deleted: Type.Integer({ minimum: 0 }) });

export const ConversationExport = Type.Object({
  format: Type.Literal('agent-conversation'),
  version: Type.Literal(1),
  exportedAt: Timestamp,
  conversation: ConversationView,
  messages: Type.Array(MessageView),
  truncated: Type.Boolean({ description: 'More messages exist than an export carries (5,000)' }),
});

export const ConversationDetail = Type.Object({
  ...ConversationView.properties,
  messages: MessagePage,
});

const ToolChoice = Type.Union([
  Type.Enum(['auto', 'none', 'required'] as const),
  Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
]);

const ResponseFormat = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' })),
    schema: Type.Object(
      {},
      { additionalProperties: true, description: 'JSON schema the answer must follow' },
    ),
  },
  { additionalProperties: false },
);

export const SendBody = Type.Object(
  {
    conversationId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    content: Type.Union([
      Type.String({ minLength: 1, maxLength: 32_000 }),
      Type.Array(ContentPart, {
        minItems: 1,
        maxItems: 20,
        description:
          "Content parts (OpenAI's text, image_url, file; input_text, input_image, input_file): images and files as base64 data: URLs",
      }),
    ]),
    images: Type.Optional(
      Type.Array(Type.String(), {
        maxItems: MAX_IMAGES,
        description: "Base64 images, as Ollama's messages carry them",
      }),
    ),
    stream: Type.Optional(Type.Boolean()),
    background: Type.Optional(
      Type.Boolean({
        description: 'Queue the turn and answer 202 with its run at once; poll GET …/runs/{runId}',
      }),
    ),
    tools: Type.Optional(
      Type.Array(ClientToolBody, { maxItems: 20, description: 'Client tools of this turn' }),
    ),
    toolChoice: Type.Optional(ToolChoice),
    responseFormat: Type.Optional(ResponseFormat),
  },
  { additionalProperties: false },
);

const PendingCall = Type.Object({
  id: Type.String(),
  name: Type.String(),
  arguments: Type.Record(Type.String(), Type.Unknown()),
  expiresAt: Type.Optional(
    Type.String({ description: 'A call waiting for approval: when it is rejected if nobody decides' }),
  ),
});

const RunStatus = Type.Enum([
  'queued',
  'in_progress',
  'requires_action',
  'completed',
  'failed',
  'cancelled',
] as const);

/** What a paused run waits for: client outputs first (OpenAI's `submit_tool_outputs`), then approvals. */
const RequiredAction = Type.Object({
  type: Type.Enum(['submit_tool_outputs', 'approve_tool_calls'] as const),
  toolCalls: Type.Array(PendingCall, { description: 'Client tool calls waiting for their outputs' }),
  approvals: Type.Array(PendingCall, { description: 'Calls of tools that need approval, waiting for it' }),
});

export const SendAnswer = Type.Object({
  conversationId: Type.String(),
  runId: Type.String(),
  status: Type.Enum(['completed', 'requires_action'] as const),
  /** The user's message and the answer; only the user's while the run waits for tool outputs. */
  messages: Type.Array(MessageView),
  usage: Usage,
  sources: Type.Array(Source),
  output: Type.Optional(Type.Unknown({ description: 'The answer parsed, with a responseFormat' })),
  requiredAction: Type.Optional(RequiredAction),
});

export const RunParams = Type.Object({
  agentId: Type.String({ minLength: 1, maxLength: 100 }),
  runId: Type.String({ minLength: 1, maxLength: 100 }),
});

export const ToolOutputsBody = Type.Object(
  {
    toolOutputs: Type.Array(
      Type.Object(
        {
          toolCallId: Type.String({ minLength: 1, maxLength: 100 }),
          output: Type.Unknown({ description: 'Text or any JSON value' }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 64 },
    ),
    stream: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const ApprovalsBody = Type.Object(
  {
    approvals: Type.Array(
      Type.Object(
        {
          toolCallId: Type.String({ minLength: 1, maxLength: 100 }),
          approve: Type.Boolean(),
          reason: Type.Optional(
            Type.String({ maxLength: 1_000, description: 'Shown to the model on a rejection' }),
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 64 },
    ),
    stream: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const RunView = Type.Object({
  id: Type.String(),
  agentId: Type.String(),
  conversationId: Type.String(),
  status: RunStatus,
  requiredAction: Nullable(RequiredAction),
  background: Type.Boolean({ description: 'A queued turn (`background: true`), run by a worker' }),
  messageId: Nullable(Type.String()),
  error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const BlockLabel = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9_-]+$',
  description: 'persona, human or a name of your own',
});

export const MemoryBlockBody = Type.Object(
  {
    label: BlockLabel,
    value: Type.Optional(Type.String({ maxLength: 20_000 })),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 20_000, description: 'Characters (default 2,000)' }),
    ),
    description: Type.Optional(Type.String({ maxLength: 1_000 })),
    conversationId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    userId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: "A user's block: read into every conversation of that user with the agent",
      }),
    ),
  },
  { additionalProperties: false },
);

export const MemoryBlockPatch = Type.Object(
  {
    value: Type.Optional(Type.String({ maxLength: 20_000 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 20_000 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 1_000 }))),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const MemoryBlockParams = Type.Object({
  agentId: Type.String({ minLength: 1, maxLength: 100 }),
  blockId: Type.String({ minLength: 1, maxLength: 100 }),
});

export const MemoryBlockView = Type.Object({
  id: Type.String(),
  agentId: Type.String(),
  conversationId: Nullable(Type.String()),
  userId: Nullable(Type.String()),
  label: Type.String(),
  description: Nullable(Type.String()),
  value: Type.String(),
  limit: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const MemoryBlockList = Type.Object({ data: Type.Array(MemoryBlockView) });

export const MemoryEditList = Type.Object({
  data: Type.Array(
    Type.Object({
      id: Type.String(),
      op: Type.String(),
      by: Type.String(),
      before: Nullable(Type.String()),
      after: Type.String(),
      createdAt: Timestamp,
    }),
  ),
});

const ArchivalScopeFields = {
  conversationId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 100, description: "One of the agent's conversations" }),
  ),
  userId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A user (customer) id' })),
};

export const ArchivalBody = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 10_000 }),
    ...ArchivalScopeFields,
  },
  { additionalProperties: false },
);

export const ArchivalQuery = Type.Object(
  {
    ...ArchivalScopeFields,
    search: Type.Optional(
      Type.String({ minLength: 1, maxLength: 4_000, description: 'Ranks the passages by this query' }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    sort: Type.Optional(Type.Enum(['createdAt'], { default: 'createdAt', description: 'Without search' })),
    order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc' })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { additionalProperties: false },
);

export const ArchivalParams = Type.Object({
  agentId: Type.String({ minLength: 1, maxLength: 100 }),
  passageId: Type.String({ minLength: 1, maxLength: 100 }),
});

export const ArchivalView = Type.Object({
  id: Type.String(),
  agentId: Type.String(),
  conversationId: Nullable(Type.String()),
  userId: Nullable(Type.String()),
  text: Type.String(),
  by: Type.String({ description: 'api or agent (its archival_memory_insert tool)' }),
  createdAt: Timestamp,
  score: Type.Optional(Type.Number({ description: 'With search: the hybrid score' })),
});

export const ArchivalList = Type.Object({
  data: Type.Array(ArchivalView),
  nextCursor: Nullable(Type.String()),
});

const AgentFileBlock = Type.Object(
  {
    label: BlockLabel,
    value: Type.String({ maxLength: 20_000 }),
    limit: Type.Integer({ minimum: 1, maximum: 20_000 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 1_000 }))),
  },
  { additionalProperties: false },
);

/** An agent as a JSON file: its definition and its own memory blocks (`GET …/export`, `POST /api/agents/import`). */
export const AgentFile = Type.Object(
  {
    format: Type.Literal('agent'),
    version: Type.Literal(1),
    exportedAt: Type.Optional(Type.String({ maxLength: 40 })),
    agent: AgentCreateBody,
    memoryBlocks: Type.Optional(Type.Array(AgentFileBlock, { maxItems: 20 })),
  },
  { additionalProperties: false },
);
