import { type Static, type TSchema, Type } from 'typebox';

/**
 * Request bodies of Ollama's API. Unknown fields are accepted and ignored, as Ollama does: its
 * clients add fields release by release. Known fields are checked, each 400 naming the field.
 */
const open = { additionalProperties: true } as const;

export const ModelName = Type.String({ minLength: 1, maxLength: 200 });
const Images = Type.Array(Type.String({ maxLength: 50_000_000 }), { maxItems: 32 });

const OllamaToolCall = Type.Object(
  {
    function: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 200 }),
        arguments: Type.Optional(Type.Object({}, open)),
      },
      open,
    ),
  },
  open,
);

const OllamaMessage = Type.Object(
  {
    role: Type.Enum(['system', 'user', 'assistant', 'tool'] as const),
    content: Type.Optional(Type.String()),
    images: Type.Optional(Images),
    tool_calls: Type.Optional(Type.Array(OllamaToolCall, { maxItems: 128 })),
    tool_name: Type.Optional(Type.String({ maxLength: 200 })),
    thinking: Type.Optional(Type.String()),
  },
  open,
);
export type OllamaMessageT = Static<typeof OllamaMessage>;

export const ToolSchema = Type.Object(
  {
    type: Type.Literal('function'),
    function: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 200 }),
        description: Type.Optional(Type.String()),
        parameters: Type.Optional(Type.Object({}, open)),
      },
      open,
    ),
  },
  open,
);

export const OllamaOptions = Type.Object(
  {
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_k: Type.Optional(Type.Integer({ minimum: 0 })),
    num_predict: Type.Optional(Type.Integer({ minimum: -2 })),
    num_ctx: Type.Optional(Type.Integer({ minimum: 1 })),
    stop: Type.Optional(Type.Array(Type.String(), { maxItems: 16 })),
    seed: Type.Optional(Type.Integer()),
    presence_penalty: Type.Optional(Type.Number()),
    frequency_penalty: Type.Optional(Type.Number()),
  },
  open,
);

/** `"json"`, a JSON schema object, or `""` (no format), as Ollama takes it. */
const Format = Type.Union([Type.Literal('json'), Type.Literal(''), Type.Object({}, open)]);
const KeepAlive = Type.Union([Type.String({ maxLength: 50 }), Type.Number()]);
const Think = Type.Union([Type.Boolean(), Type.Enum(['low', 'medium', 'high'] as const)]);

export const OllamaChatBody = Type.Object(
  {
    model: ModelName,
    messages: Type.Optional(Type.Array(OllamaMessage, { maxItems: 10_000 })),
    stream: Type.Optional(Type.Boolean()),
    format: Type.Optional(Format),
    options: Type.Optional(OllamaOptions),
    keep_alive: Type.Optional(KeepAlive),
    tools: Type.Optional(Type.Array(ToolSchema, { maxItems: 128 })),
    think: Type.Optional(Think),
    logprobs: Type.Optional(Type.Boolean()),
    top_logprobs: Type.Optional(Type.Integer({ minimum: 0, maximum: 20 })),
  },
  open,
);
export type OllamaChatBodyT = Static<typeof OllamaChatBody>;

export const OllamaGenerateBody = Type.Object(
  {
    model: ModelName,
    prompt: Type.Optional(Type.String()),
    suffix: Type.Optional(Type.String()),
    system: Type.Optional(Type.String()),
    stream: Type.Optional(Type.Boolean()),
    raw: Type.Optional(Type.Boolean()),
    template: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    context: Type.Optional(
      Type.Array(Type.Integer({ minimum: 0 }), {
        maxItems: 1_048_576,
        description: 'The `context` of a previous answer, continuing it',
      }),
    ),
    format: Type.Optional(Format),
    images: Type.Optional(Images),
    options: Type.Optional(OllamaOptions),
    keep_alive: Type.Optional(KeepAlive),
    think: Type.Optional(Think),
    logprobs: Type.Optional(Type.Boolean()),
    top_logprobs: Type.Optional(Type.Integer({ minimum: 0, maximum: 20 })),
  },
  open,
);
export type OllamaGenerateBodyT = Static<typeof OllamaGenerateBody>;

export const OllamaEmbedBody = Type.Object(
  {
    model: ModelName,
    input: Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 2048 })]),
    truncate: Type.Optional(Type.Boolean()),
    dimensions: Type.Optional(Type.Integer({ minimum: 1, maximum: 65_536 })),
    options: Type.Optional(OllamaOptions),
    keep_alive: Type.Optional(KeepAlive),
  },
  open,
);

export const OllamaLegacyEmbeddingsBody = Type.Object(
  {
    model: ModelName,
    prompt: Type.String(),
    options: Type.Optional(OllamaOptions),
    keep_alive: Type.Optional(KeepAlive),
  },
  open,
);

/** `model`, or `name` as clients before Ollama 0.1.x sent it. */
export const OllamaShowBody = Type.Object(
  {
    model: Type.Optional(ModelName),
    name: Type.Optional(ModelName),
    verbose: Type.Optional(Type.Boolean()),
  },
  open,
);

// ---- responses (documentation and serialization; streams are NDJSON lines of the same objects) ----

const Details = Type.Object(
  {
    parent_model: Type.String(),
    format: Type.String(),
    family: Type.String(),
    families: Type.Array(Type.String()),
    parameter_size: Type.String(),
    quantization_level: Type.String(),
  },
  open,
);

const Done = {
  done: Type.Boolean(),
  done_reason: Type.Optional(Type.String()),
  total_duration: Type.Optional(Type.Integer()),
  load_duration: Type.Optional(Type.Integer()),
  prompt_eval_count: Type.Optional(Type.Integer()),
  prompt_eval_duration: Type.Optional(Type.Integer()),
  eval_count: Type.Optional(Type.Integer()),
  eval_duration: Type.Optional(Type.Integer()),
};

export const OllamaChatResponse = Type.Object(
  {
    model: Type.String(),
    created_at: Type.String(),
    message: Type.Object({}, open),
    ...Done,
  },
  {
    ...open,
    description: 'One object; with stream (the default) NDJSON lines of this shape, the last done:true',
  },
);

export const OllamaGenerateResponse = Type.Object(
  { model: Type.String(), created_at: Type.String(), response: Type.String(), ...Done },
  {
    ...open,
    description: 'One object; with stream (the default) NDJSON lines of this shape, the last done:true',
  },
);

export const OllamaEmbedResponse = Type.Object(
  {
    model: Type.String(),
    embeddings: Type.Array(Type.Array(Type.Number())),
    total_duration: Type.Integer(),
    load_duration: Type.Integer(),
    prompt_eval_count: Type.Integer(),
  },
  open,
);

export const OllamaLegacyEmbeddingsResponse = Type.Object({ embedding: Type.Array(Type.Number()) }, open);

const TagModel = Type.Object(
  {
    name: Type.String(),
    model: Type.String(),
    modified_at: Type.String(),
    size: Type.Integer(),
    digest: Type.String(),
    details: Details,
  },
  open,
);
export const OllamaTagsResponse = Type.Object({ models: Type.Array(TagModel) });
export const OllamaPsResponse = Type.Object({
  models: Type.Array(
    Type.Object(
      {
        name: Type.String(),
        model: Type.String(),
        size: Type.Integer(),
        digest: Type.String(),
        details: Details,
        expires_at: Type.String(),
        size_vram: Type.Integer(),
      },
      open,
    ),
  ),
});
export const OllamaShowResponse = Type.Object(
  {
    modelfile: Type.String(),
    parameters: Type.String(),
    template: Type.String(),
    details: Details,
    model_info: Type.Object({}, open),
    capabilities: Type.Array(Type.String()),
    modified_at: Type.String(),
  },
  open,
);
export const OllamaVersionResponse = Type.Object({ version: Type.String() });

/** Ollama's error body, with the platform's fields beside it. */
const OllamaErrorBody = Type.Object(
  {
    error: Type.String(),
    code: Type.String(),
    message: Type.String(),
    details: Type.Object({}, open),
    requestId: Type.String(),
  },
  { $id: 'OllamaErrorBody', description: "Ollama's error body; the platform's fields beside it" },
);

export function withOllamaErrors<T extends Record<number, TSchema>>(success: T) {
  return { ...success, '4xx': OllamaErrorBody, '5xx': OllamaErrorBody };
}

// ---- model management (/api/create, /copy, /delete, /pull, /push) ----

export const OllamaCreateBody = Type.Object(
  {
    model: ModelName,
    from: Type.Optional(ModelName),
    system: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    parameters: Type.Optional(OllamaOptions),
    /** The legacy form: a whole Modelfile (FROM, PARAMETER, SYSTEM). */
    modelfile: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    template: Type.Optional(Type.String()),
    files: Type.Optional(Type.Object({}, open)),
    adapters: Type.Optional(Type.Object({}, open)),
    quantize: Type.Optional(Type.String({ maxLength: 50 })),
    messages: Type.Optional(Type.Array(Type.Object({}, open), { maxItems: 1000 })),
    license: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 20 })])),
    stream: Type.Optional(Type.Boolean()),
  },
  open,
);
export type OllamaCreateBodyT = Static<typeof OllamaCreateBody>;

export const OllamaCopyBody = Type.Object({ source: ModelName, destination: ModelName }, open);
export const OllamaModelBody = Type.Object(
  {
    model: Type.Optional(ModelName),
    /** The older clients' name for `model`. */
    name: Type.Optional(ModelName),
    insecure: Type.Optional(Type.Boolean()),
    stream: Type.Optional(Type.Boolean()),
  },
  open,
);
export const OllamaStatusResponse = Type.Object(
  { status: Type.String() },
  {
    ...open,
    description: 'With `stream` (the default): NDJSON progress lines, the last `{"status":"success"}`',
  },
);
export const BlobParams = Type.Object({ digest: Type.String({ maxLength: 200 }) });
