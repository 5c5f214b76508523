import { type Static, Type } from 'typebox';
import {
  ColumnsMapper,
  ResourceLocator,
  SortCollection,
  ValuesToSend,
  WhereCollection,
} from '../sql/parameters.js';

const Options = Type.Object(
  {
    connectionLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    connectTimeout: Type.Optional(Type.Number({ minimum: 0 })),
    queryBatching: Type.Optional(Type.Enum(['single', 'independently', 'transaction'] as const)),
    // Read raw by the node (rawParameters), as n8n does.
    queryReplacement: Type.Optional(
      Type.Union([Type.String({ maxLength: 100_000 }), Type.Array(Type.Unknown())]),
    ),
    outputColumns: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 500 })),
    detailedOutput: Type.Optional(Type.Boolean()),
    priority: Type.Optional(Type.Enum(['LOW_PRIORITY', 'HIGH_PRIORITY'] as const)),
    replaceEmptyStrings: Type.Optional(Type.Boolean()),
    selectDistinct: Type.Optional(Type.Boolean()),
    skipOnConflict: Type.Optional(Type.Boolean()),
    decimalNumbers: Type.Optional(Type.Boolean()),
    largeNumbersOutput: Type.Optional(Type.Enum(['numbers', 'text'] as const)),
    nodeVersion: Type.Optional(Type.Number()),
    operation: Type.Optional(Type.String()),
    // The platform's bounds (not n8n's): seconds a query may run, rows a run may return.
    queryTimeout: Type.Optional(Type.Number({ minimum: 0, maximum: 3_600 })),
    maxRows: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  },
  { additionalProperties: false, default: {} },
);

/** n8n's MySQL v2 parameters (2.0–2.5). */
export const MySqlParameters = Type.Object(
  {
    resource: Type.Optional(Type.Literal('database')),
    operation: Type.Enum(['deleteTable', 'executeQuery', 'insert', 'select', 'update', 'upsert'] as const, {
      default: 'insert',
    }),
    query: Type.String({ default: '', maxLength: 1_000_000 }),
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
    options: Options,
  },
  { additionalProperties: false },
);
export type MySqlParams = Static<typeof MySqlParameters>;
