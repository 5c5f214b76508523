import { type Static, type TSchema, Type } from 'typebox';
import { ModelName } from './ollama-schemas.js';

/** Anthropic's Messages API bodies; unknown fields are accepted and ignored, as compatible servers do. */
const open = { additionalProperties: true } as const;

/** Anthropic's prompt-cache hint: accepted on every block; the gateway has no prompt cache to steer. */
const CacheControl = Type.Optional(Type.Union([Type.Object({}, open), Type.Null()]));

const TextBlock = Type.Object(
  { type: Type.Literal('text'), text: Type.String(), cache_control: CacheControl },
  open,
);

const ImageSource = Type.Object(
  {
    type: Type.String({ maxLength: 20 }),
    media_type: Type.Optional(Type.String({ maxLength: 100 })),
    data: Type.Optional(Type.String({ maxLength: 50_000_000 })),
    url: Type.Optional(Type.String({ maxLength: 10_000 })),
  },
  open,
);

/** A block of a tool result: text or image. */
const ResultBlock = Type.Object(
  {
    type: Type.String({ maxLength: 100 }),
    text: Type.Optional(Type.String()),
    source: Type.Optional(ImageSource),
    cache_control: CacheControl,
  },
  open,
);

/**
 * One content block. Its fields are typed here; which of them a block's `type` requires is checked by
 * the adapter, which names the block and the field (a union of block schemas gives one error per branch).
 */
const ContentBlock = Type.Object(
  {
    type: Type.String({ maxLength: 100 }),
    text: Type.Optional(Type.String()),
    source: Type.Optional(ImageSource),
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    input: Type.Optional(Type.Object({}, open)),
    tool_use_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    content: Type.Optional(Type.Union([Type.String(), Type.Array(ResultBlock, { maxItems: 256 })])),
    is_error: Type.Optional(Type.Boolean()),
    thinking: Type.Optional(Type.String()),
    signature: Type.Optional(Type.String()),
    citations: Type.Optional(
      Type.Union([Type.Array(Type.Object({}, open), { maxItems: 1000 }), Type.Null()]),
    ),
    cache_control: CacheControl,
  },
  open,
);
export type AnthropicBlockT = Static<typeof ContentBlock>;

const AnthropicMessage = Type.Object(
  {
    role: Type.Enum(['user', 'assistant'] as const),
    content: Type.Union([Type.String(), Type.Array(ContentBlock, { maxItems: 1024 })]),
  },
  open,
);
export type AnthropicMessageT = Static<typeof AnthropicMessage>;

const Tool = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String()),
    input_schema: Type.Optional(Type.Object({}, open)),
    type: Type.Optional(Type.String({ maxLength: 100 })),
    strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    cache_control: CacheControl,
  },
  open,
);

const ToolChoice = Type.Object(
  {
    type: Type.Enum(['auto', 'any', 'tool', 'none'] as const),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    disable_parallel_tool_use: Type.Optional(Type.Boolean()),
  },
  open,
);

const Thinking = Type.Object(
  {
    type: Type.Enum(['enabled', 'disabled'] as const),
    budget_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  open,
);

const System = Type.Union([Type.String(), Type.Array(TextBlock, { maxItems: 256 })]);

/** What `count_tokens` reads: the prompt parts of a Messages request. */
const promptFields = {
  model: ModelName,
  messages: Type.Array(AnthropicMessage, { minItems: 1, maxItems: 10_000 }),
  system: Type.Optional(System),
  tools: Type.Optional(Type.Array(Tool, { maxItems: 128 })),
  tool_choice: Type.Optional(ToolChoice),
  thinking: Type.Optional(Thinking),
};

export const AnthropicMessagesBody = Type.Object(
  {
    ...promptFields,
    max_tokens: Type.Integer({ minimum: 1 }),
    stream: Type.Optional(Type.Boolean()),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_k: Type.Optional(Type.Integer({ minimum: 0 })),
    stop_sequences: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 16 })),
    metadata: Type.Optional(
      Type.Object(
        { user_id: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])) },
        open,
      ),
    ),
    service_tier: Type.Optional(Type.Enum(['auto', 'standard_only'] as const)),
    output_config: Type.Optional(
      Type.Object(
        {
          effort: Type.Optional(
            Type.Union([Type.Enum(['low', 'medium', 'high', 'xhigh', 'max'] as const), Type.Null()]),
          ),
          format: Type.Optional(
            Type.Union([
              Type.Object({ type: Type.Literal('json_schema'), schema: Type.Object({}, open) }, open),
              Type.Null(),
            ]),
          ),
        },
        open,
      ),
    ),
  },
  open,
);
export type AnthropicMessagesBodyT = Static<typeof AnthropicMessagesBody>;

export const AnthropicCountTokensBody = Type.Object(promptFields, open);
export type AnthropicCountTokensBodyT = Static<typeof AnthropicCountTokensBody>;

export const AnthropicModelsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  after_id: Type.Optional(Type.String({ maxLength: 200 })),
  before_id: Type.Optional(Type.String({ maxLength: 200 })),
});

// ---- responses ----

const Usage = Type.Object({ input_tokens: Type.Integer(), output_tokens: Type.Integer() }, open);

export const AnthropicMessageResponse = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('message'),
    role: Type.Literal('assistant'),
    model: Type.String(),
    content: Type.Array(Type.Object({ type: Type.String() }, open)),
    stop_reason: Type.Union([Type.String(), Type.Null()]),
    stop_sequence: Type.Union([Type.String(), Type.Null()]),
    usage: Usage,
  },
  {
    ...open,
    description:
      'With `stream: true`, server-sent events: message_start, content_block_start/delta/stop, message_delta, message_stop, ping',
  },
);

export const AnthropicTokenCount = Type.Object({ input_tokens: Type.Integer() });

export const AnthropicModel = Type.Object(
  {
    type: Type.Literal('model'),
    id: Type.String(),
    display_name: Type.String(),
    created_at: Type.String(),
  },
  open,
);
export const AnthropicModelList = Type.Object({
  data: Type.Array(AnthropicModel),
  has_more: Type.Boolean(),
  first_id: Type.Union([Type.String(), Type.Null()]),
  last_id: Type.Union([Type.String(), Type.Null()]),
});

/** Anthropic's error body, with the platform's fields beside it. */
const AnthropicErrorBody = Type.Object(
  {
    type: Type.Literal('error'),
    error: Type.Object({ type: Type.String(), message: Type.String() }, open),
    code: Type.String(),
    message: Type.String(),
    details: Type.Object({}, open),
    requestId: Type.String(),
  },
  { $id: 'AnthropicErrorBody', description: "Anthropic's error body; the platform's fields beside it" },
);

export function withAnthropicErrors<T extends Record<number, TSchema>>(success: T) {
  return { ...success, '4xx': AnthropicErrorBody, '5xx': AnthropicErrorBody };
}
