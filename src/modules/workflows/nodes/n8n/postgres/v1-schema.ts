import { type Static, Type } from 'typebox';

/** n8n's Postgres v1 parameters: comma-separated column lists, a mode in additionalFields. */
export const PostgresV1Parameters = Type.Object(
  {
    operation: Type.Enum(['executeQuery', 'insert', 'update'] as const, { default: 'insert' }),
    query: Type.String({ default: '', maxLength: 1_000_000 }),
    schema: Type.String({ default: 'public', maxLength: 200 }),
    table: Type.String({ default: '', maxLength: 200 }),
    // `id:int,name:text,description`: properties of the items, each with an optional cast.
    columns: Type.String({ default: '', maxLength: 20_000 }),
    updateKey: Type.String({ default: 'id', maxLength: 2_000 }),
    returnFields: Type.String({ default: '*', maxLength: 20_000 }),
    additionalFields: Type.Object(
      {
        mode: Type.Optional(Type.Enum(['independently', 'multiple', 'transaction'] as const)),
        largeNumbersOutput: Type.Optional(Type.Enum(['numbers', 'text'] as const)),
        // `quantity,price`: item properties sent as $1, $2… of the query.
        queryParams: Type.Optional(Type.String({ maxLength: 20_000 })),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);
export type PostgresV1Params = Static<typeof PostgresV1Parameters>;
