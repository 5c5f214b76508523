import { type Static, Type } from 'typebox';
import {
  ColumnsMapper,
  ResourceLocator,
  SortCollection,
  ValuesToSend,
  WhereCollection,
} from '../sql/parameters.js';

export const POSTGRES_OPERATIONS = [
  'deleteTable',
  'executeQuery',
  'insert',
  'select',
  'update',
  'upsert',
] as const;

const Options = Type.Object(
  {
    cascade: Type.Optional(Type.Boolean()),
    connectionTimeout: Type.Optional(Type.Number({ minimum: 0, maximum: 600 })),
    delayClosingIdleConnection: Type.Optional(Type.Number({ minimum: 0 })),
    queryBatching: Type.Optional(Type.Enum(['single', 'independently', 'transaction'] as const)),
    // Read raw by the node (rawParameters): n8n splits it at commas before evaluating it.
    queryReplacement: Type.Optional(
      Type.Union([Type.String({ maxLength: 100_000 }), Type.Array(Type.Unknown())]),
    ),
    outputColumns: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 500 })),
    largeNumbersOutput: Type.Optional(Type.Enum(['numbers', 'text'] as const)),
    skipOnConflict: Type.Optional(Type.Boolean()),
    replaceEmptyStrings: Type.Optional(Type.Boolean()),
    treatQueryParametersInSingleQuotesAsText: Type.Optional(Type.Boolean()),
    nodeVersion: Type.Optional(Type.Number()),
    operation: Type.Optional(Type.String()),
    // The platform's bounds (not n8n's): seconds a query may run, rows a run may return.
    queryTimeout: Type.Optional(Type.Number({ minimum: 0, maximum: 3_600 })),
    maxRows: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  },
  { additionalProperties: false, default: {} },
);

/** n8n's Postgres v2 parameters (2.0–2.6: the v2.2 resource mapper next to the v2.0 fields). */
export const PostgresParameters = Type.Object(
  {
    authentication: Type.Optional(Type.String()),
    resource: Type.Optional(Type.Literal('database')),
    operation: Type.Enum(POSTGRES_OPERATIONS, { default: 'insert' }),
    query: Type.String({ default: '', maxLength: 1_000_000 }),
    schema: Type.Optional(ResourceLocator),
    table: Type.Optional(ResourceLocator),
    dataMode: Type.Optional(Type.Enum(['autoMapInputData', 'defineBelow'] as const)),
    valuesToSend: Type.Optional(ValuesToSend),
    columns: Type.Optional(ColumnsMapper),
    columnToMatchOn: Type.Optional(Type.String({ maxLength: 200 })),
    valueToMatchOn: Type.Optional(Type.Unknown()),
    where: Type.Optional(WhereCollection),
    combineConditions: Type.Optional(Type.Enum(['AND', 'OR'] as const)),
    sort: Type.Optional(SortCollection),
    returnAll: Type.Boolean({ default: false }),
    limit: Type.Number({ default: 50, minimum: 1 }),
    deleteCommand: Type.Enum(['truncate', 'delete', 'drop'] as const, { default: 'truncate' }),
    restartSequences: Type.Boolean({ default: false }),
    options: Options,
  },
  { additionalProperties: false },
);
export type PostgresParams = Static<typeof PostgresParameters>;
