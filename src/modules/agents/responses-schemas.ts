import { type Static, Type } from 'typebox';

/**
 * OpenAI's Responses API (`POST /v1/responses`) as its clients send it. Items are checked by hand in
 * `responses-format.ts` (each problem a 400 naming its place); fields this server has no use for
 * (`include`, `store`, `metadata`, …) are accepted as OpenAI's clients send them; `truncation` is
 * honoured (responses-window.ts).
 */
const Item = Type.Record(Type.String(), Type.Unknown());
const open = { additionalProperties: true } as const;
const orNull = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const ResponsesBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200 }),
    input: Type.Optional(
      Type.Union([Type.String({ maxLength: 1_000_000 }), Type.Array(Item, { maxItems: 2_000 })]),
    ),
    instructions: Type.Optional(orNull(Type.String({ maxLength: 100_000 }))),
    tools: Type.Optional(orNull(Type.Array(Item, { maxItems: 64 }))),
    tool_choice: Type.Optional(Type.Unknown()),
    previous_response_id: Type.Optional(orNull(Type.String({ minLength: 1, maxLength: 100 }))),
    stream: Type.Optional(orNull(Type.Boolean())),
    temperature: Type.Optional(orNull(Type.Number({ minimum: 0, maximum: 2 }))),
    top_p: Type.Optional(orNull(Type.Number({ minimum: 0, maximum: 1 }))),
    max_output_tokens: Type.Optional(orNull(Type.Integer({ minimum: 1 }))),
    text: Type.Optional(orNull(Type.Object({ format: Type.Optional(Item) }, open))),
    parallel_tool_calls: Type.Optional(orNull(Type.Boolean())),
    background: Type.Optional(orNull(Type.Boolean())),
    conversation: Type.Optional(Type.Unknown()),
    truncation: Type.Optional(orNull(Type.Union([Type.Literal('auto'), Type.Literal('disabled')]))),
  },
  open,
);

export const ResponseObject = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('response'),
    created_at: Type.Integer(),
    status: Type.String(),
    model: Type.String(),
    output: Type.Array(Item),
    usage: Type.Object(
      { input_tokens: Type.Integer(), output_tokens: Type.Integer(), total_tokens: Type.Integer() },
      open,
    ),
  },
  open,
);

export type ResponseObjectT = Static<typeof ResponseObject>;

export const ResponseParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

/** OpenAI's error body (what its clients parse), with the platform's fields beside it. */
const OpenAiError = Type.Object(
  {
    error: Type.Object(
      {
        message: Type.String(),
        type: Type.String(),
        param: orNull(Type.String()),
        code: orNull(Type.String()),
      },
      open,
    ),
  },
  open,
);

export const withResponseErrors = <T extends Record<number, unknown>>(success: T) => ({
  ...success,
  '4xx': OpenAiError,
  '5xx': OpenAiError,
});

export type ResponsesBodyT = Static<typeof ResponsesBody>;
