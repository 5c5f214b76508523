import { type Static, Type } from 'typebox';
import {
  annotated,
  shownWhen,
  shownWhenAny,
  versionAtLeast,
  versionBelow,
} from '../../../engine/display-options.js';
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

const TABLE_OPERATIONS = ['deleteTable', 'insert', 'select', 'update', 'upsert'];
const WRITES = ['insert', 'update', 'upsert'];
/** `where` and `combineConditions`: select, and delete's `delete` command. */
const SELECTING = shownWhenAny(
  { show: { operation: ['select'] } },
  { show: { operation: ['deleteTable'], deleteCommand: ['delete'] } },
);

/** n8n's `displayOptions` are those of its Postgres v2 operation descriptions. */
const Options = Type.Object(
  {
    cascade: Type.Optional(
      Type.Boolean(shownWhen({ '/operation': ['deleteTable'] }, { '/deleteCommand': ['delete'] })),
    ),
    connectionTimeout: Type.Optional(Type.Number({ minimum: 0, maximum: 600 })),
    delayClosingIdleConnection: Type.Optional(Type.Number({ minimum: 0 })),
    queryBatching: Type.Optional(Type.Enum(['single', 'independently', 'transaction'] as const)),
    // Read raw by the node (rawParameters): n8n splits it at commas before evaluating it.
    queryReplacement: Type.Optional(
      Type.Union(
        [Type.String({ maxLength: 100_000 }), Type.Array(Type.Unknown())],
        shownWhen({ '/operation': ['executeQuery'] }),
      ),
    ),
    outputColumns: Type.Optional(
      Type.Array(Type.String({ maxLength: 200 }), {
        maxItems: 500,
        ...shownWhen({ '/operation': ['select', ...WRITES] }),
      }),
    ),
    largeNumbersOutput: Type.Optional(Type.Enum(['numbers', 'text'] as const)),
    skipOnConflict: Type.Optional(Type.Boolean(shownWhen({ '/operation': ['insert'] }))),
    replaceEmptyStrings: Type.Optional(
      Type.Boolean(shownWhen({ '/operation': [...WRITES, 'executeQuery'] })),
    ),
    treatQueryParametersInSingleQuotesAsText: Type.Optional(
      Type.Boolean(shownWhen({ queryReplacement: [{ _cnd: { exists: true } }] })),
    ),
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
    query: Type.String({ default: '', maxLength: 1_000_000, ...shownWhen({ operation: ['executeQuery'] }) }),
    schema: Type.Optional(annotated(ResourceLocator, shownWhen({ operation: TABLE_OPERATIONS }))),
    table: Type.Optional(annotated(ResourceLocator, shownWhen({ operation: TABLE_OPERATIONS }))),
    // 2.0 and 2.1 list the values to write; 2.2 brought the column mapper.
    dataMode: Type.Optional(
      Type.Enum(
        ['autoMapInputData', 'defineBelow'] as const,
        shownWhen({ operation: WRITES, '@version': [versionBelow(2.2)] }),
      ),
    ),
    valuesToSend: Type.Optional(
      annotated(
        ValuesToSend,
        shownWhen({ operation: WRITES, dataMode: ['defineBelow'], '@version': [versionBelow(2.2)] }),
      ),
    ),
    columns: Type.Optional(
      annotated(ColumnsMapper, shownWhen({ operation: WRITES, '@version': [versionAtLeast(2.2)] })),
    ),
    columnToMatchOn: Type.Optional(
      Type.String({
        maxLength: 200,
        ...shownWhen({ operation: ['update', 'upsert'], '@version': [versionBelow(2.2)] }),
      }),
    ),
    valueToMatchOn: Type.Optional(
      Type.Unknown(shownWhen({ operation: ['update', 'upsert'], '@version': [versionBelow(2.2)] })),
    ),
    where: Type.Optional(annotated(WhereCollection, SELECTING)),
    combineConditions: Type.Optional(Type.Enum(['AND', 'OR'] as const, SELECTING)),
    sort: Type.Optional(annotated(SortCollection, shownWhen({ operation: ['select'] }))),
    returnAll: Type.Boolean({ default: false, ...shownWhen({ operation: ['select'] }) }),
    limit: Type.Number({
      default: 50,
      minimum: 1,
      ...shownWhen({ operation: ['select'], returnAll: [false] }),
    }),
    deleteCommand: Type.Enum(['truncate', 'delete', 'drop'] as const, {
      default: 'truncate',
      ...shownWhen({ operation: ['deleteTable'] }),
    }),
    restartSequences: Type.Boolean({
      default: false,
      ...shownWhen({ operation: ['deleteTable'], deleteCommand: ['truncate'] }),
    }),
    options: Options,
  },
  { additionalProperties: false },
);
export type PostgresParams = Static<typeof PostgresParameters>;
