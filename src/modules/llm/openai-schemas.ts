import { type Static, type TSchema, Type } from 'typebox';
import { ModelName, ToolSchema } from './ollama-schemas.js';

/** OpenAI's request bodies; unknown fields are accepted and ignored, as OpenAI-compatible servers do. */
const open = { additionalProperties: true } as const;

const ContentPart = Type.Object(
  {
    type: Type.String({ maxLength: 50 }),
    text: Type.Optional(Type.String()),
    image_url: Type.Optional(
      Type.Object(
        { url: Type.String({ maxLength: 50_000_000 }), detail: Type.Optional(Type.String()) },
        open,
      ),
    ),
  },
  open,
);

const OpenAiToolCall = Type.Object(
  {
    id: Type.String({ maxLength: 200 }),
    type: Type.Literal('function'),
    function: Type.Object(
      { name: Type.String({ minLength: 1, maxLength: 200 }), arguments: Type.String() },
      open,
    ),
  },
  open,
);

const OpenAiMessage = Type.Object(
  {
    role: Type.Enum(['system', 'developer', 'user', 'assistant', 'tool'] as const),
    content: Type.Optional(
      Type.Union([Type.String(), Type.Null(), Type.Array(ContentPart, { maxItems: 256 })]),
    ),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    tool_calls: Type.Optional(Type.Array(OpenAiToolCall, { maxItems: 128 })),
    tool_call_id: Type.Optional(Type.String({ maxLength: 200 })),
  },
  open,
);
export type OpenAiMessageT = Static<typeof OpenAiMessage>;

const ResponseFormat = Type.Object(
  {
    type: Type.Enum(['text', 'json_object', 'json_schema'] as const),
    json_schema: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Type.String({ maxLength: 64 })),
          schema: Type.Optional(Type.Object({}, open)),
          strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
        },
        open,
      ),
    ),
  },
  open,
);

/** The most answers one request may ask for (OpenAI's own bound). */
export const MAX_N = 128;

const Stop = Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 16 }), Type.Null()]);

export const OpenAiChatBody = Type.Object(
  {
    model: ModelName,
    messages: Type.Array(OpenAiMessage, { minItems: 1, maxItems: 10_000 }),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    stream_options: Type.Optional(
      Type.Union([Type.Object({ include_usage: Type.Optional(Type.Boolean()) }, open), Type.Null()]),
    ),
    temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 2 }), Type.Null()])),
    top_p: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()])),
    max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    max_completion_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    stop: Type.Optional(Stop),
    seed: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    presence_penalty: Type.Optional(Type.Union([Type.Number({ minimum: -2, maximum: 2 }), Type.Null()])),
    frequency_penalty: Type.Optional(Type.Union([Type.Number({ minimum: -2, maximum: 2 }), Type.Null()])),
    n: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: MAX_N }), Type.Null()])),
    response_format: Type.Optional(ResponseFormat),
    tools: Type.Optional(Type.Array(ToolSchema, { maxItems: 128 })),
    tool_choice: Type.Optional(
      Type.Union([
        Type.Enum(['auto', 'none', 'required'] as const),
        Type.Object(
          {
            type: Type.Literal('function'),
            function: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, open),
          },
          open,
        ),
        Type.Null(),
      ]),
    ),
    parallel_tool_calls: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    logprobs: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    top_logprobs: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 20 }), Type.Null()])),
    reasoning_effort: Type.Optional(
      Type.Union([Type.Enum(['minimal', 'low', 'medium', 'high'] as const), Type.Null()]),
    ),
    user: Type.Optional(Type.String({ maxLength: 256 })),
    metadata: Type.Optional(
      Type.Union([
        Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 512 }), { maxProperties: 16 }),
        Type.Null(),
      ]),
    ),
    store: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    service_tier: Type.Optional(
      Type.Union([Type.Enum(['auto', 'default', 'flex', 'scale', 'priority'] as const), Type.Null()]),
    ),
  },
  open,
);
export type OpenAiChatBodyT = Static<typeof OpenAiChatBody>;

const TokenIds = Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1, maxItems: 8192 });

export const OpenAiEmbeddingsBody = Type.Object(
  {
    model: ModelName,
    input: Type.Union(
      [
        Type.String(),
        Type.Array(Type.String(), { minItems: 1, maxItems: 2048 }),
        TokenIds,
        Type.Array(TokenIds, { minItems: 1, maxItems: 2048 }),
      ],
      { description: 'Text, texts, token ids or arrays of token ids (these for providers that read them)' },
    ),
    encoding_format: Type.Optional(Type.Enum(['float', 'base64'] as const)),
    dimensions: Type.Optional(Type.Integer({ minimum: 1, maximum: 65_536 })),
    user: Type.Optional(Type.String({ maxLength: 256 })),
  },
  open,
);
export type OpenAiEmbeddingsBodyT = Static<typeof OpenAiEmbeddingsBody>;

/** The legacy completions API (`/v1/completions`): one prompt, optionally a suffix (fill-in-the-middle). */
export const OpenAiCompletionBody = Type.Object(
  {
    model: ModelName,
    prompt: Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1, maxItems: 1 })], {
      description: 'One prompt (a list of one; several prompts or token ids are refused)',
    }),
    suffix: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    stream_options: Type.Optional(
      Type.Union([Type.Object({ include_usage: Type.Optional(Type.Boolean()) }, open), Type.Null()]),
    ),
    max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 2 }), Type.Null()])),
    top_p: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()])),
    n: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: MAX_N }), Type.Null()])),
    stop: Type.Optional(Stop),
    seed: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    presence_penalty: Type.Optional(Type.Union([Type.Number({ minimum: -2, maximum: 2 }), Type.Null()])),
    frequency_penalty: Type.Optional(Type.Union([Type.Number({ minimum: -2, maximum: 2 }), Type.Null()])),
    logprobs: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 5 }), Type.Null()])),
    echo: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    best_of: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 20 }), Type.Null()])),
    logit_bias: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Number()), Type.Null()])),
    user: Type.Optional(Type.String({ maxLength: 256 })),
  },
  open,
);
export type OpenAiCompletionBodyT = Static<typeof OpenAiCompletionBody>;

export const OpenAiModerationBody = Type.Object(
  {
    model: Type.Optional(ModelName),
    input: Type.Union([
      Type.String(),
      Type.Array(Type.String(), { minItems: 1, maxItems: 256 }),
      Type.Array(Type.Object({ type: Type.String({ maxLength: 50 }) }, open), { minItems: 1, maxItems: 256 }),
    ]),
  },
  open,
);

// ---- responses ----

const Usage = Type.Object(
  { prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() },
  open,
);

export const OpenAiChatResponse = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion'),
    created: Type.Integer(),
    model: Type.String(),
    choices: Type.Array(Type.Object({}, open)),
    usage: Usage,
  },
  {
    ...open,
    description: 'With `stream: true`, server-sent `chat.completion.chunk` events ending `data: [DONE]`',
  },
);

export const OpenAiCompletionResponse = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('text_completion'),
    created: Type.Integer(),
    model: Type.String(),
    choices: Type.Array(Type.Object({}, open)),
    usage: Usage,
  },
  { ...open, description: 'With `stream: true`, server-sent `text_completion` events ending `data: [DONE]`' },
);

export const OpenAiModerationResponse = Type.Object(
  { id: Type.String(), model: Type.String(), results: Type.Array(Type.Object({}, open)) },
  open,
);

export const OpenAiEmbeddingsResponse = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(
      Type.Object(
        {
          object: Type.Literal('embedding'),
          index: Type.Integer(),
          embedding: Type.Union([
            Type.Array(Type.Number()),
            Type.String({ description: 'base64 float32 LE' }),
          ]),
        },
        open,
      ),
    ),
    model: Type.String(),
    usage: Type.Object({ prompt_tokens: Type.Integer(), total_tokens: Type.Integer() }, open),
  },
  open,
);

export const OpenAiModel = Type.Object(
  { id: Type.String(), object: Type.Literal('model'), created: Type.Integer(), owned_by: Type.String() },
  open,
);
export const OpenAiModelList = Type.Object({ object: Type.Literal('list'), data: Type.Array(OpenAiModel) });

/** OpenAI's error body, with the platform's fields beside it. */
const OpenAiErrorBody = Type.Object(
  {
    error: Type.Object(
      {
        message: Type.String(),
        type: Type.String(),
        param: Type.Union([Type.String(), Type.Null()]),
        code: Type.Union([Type.String(), Type.Null()]),
      },
      open,
    ),
    code: Type.String(),
    message: Type.String(),
    details: Type.Object({}, open),
    requestId: Type.String(),
  },
  { $id: 'OpenAiErrorBody', description: "OpenAI's error body; the platform's fields beside it" },
);

export function withOpenAiErrors<T extends Record<number, TSchema>>(success: T) {
  return { ...success, '4xx': OpenAiErrorBody, '5xx': OpenAiErrorBody };
}
