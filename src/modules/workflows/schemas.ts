import { type Static, Type } from 'typebox';
import { MAX_OFFSET } from '../../core/http/list-query.js';
import { listQueryOf, Nullable, Timestamp } from '../../core/http/schemas.js';

const Anything = Type.Unknown();
const JsonObject = Type.Record(Type.String(), Anything);

/** Bounded, so finite: a number JSON cannot hold (1e400 is Infinity) is refused, never stored as null. */
const Coordinate = Type.Number({ minimum: -1e9, maximum: 1e9 });

export const NodeSchema = Type.Object({
  id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  name: Type.String({ minLength: 1, maxLength: 128 }),
  type: Type.String({ minLength: 1, maxLength: 100 }),
  typeVersion: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000 })),
  position: Type.Optional(Type.Tuple([Coordinate, Coordinate])),
  parameters: Type.Optional(JsonObject),
  credentials: Type.Optional(Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 200 }))),
  continueOnFail: Type.Optional(Type.Boolean()),
  disabled: Type.Optional(Type.Boolean()),
});

const ConnectionTarget = Type.Object({
  node: Type.String({ minLength: 1 }),
  type: Type.Literal('main'),
  index: Type.Integer({ minimum: 0 }),
});
export const ConnectionsSchema = Type.Record(
  Type.String(),
  Type.Object({ main: Type.Array(Nullable(Type.Array(ConnectionTarget))) }),
);

/** Create or replace; n8n exports carry more fields (id, active, tags, …), which are ignored. */
export const WorkflowBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 128 }),
  nodes: Type.Array(NodeSchema, { maxItems: 500 }),
  connections: ConnectionsSchema,
  settings: Type.Optional(JsonObject),
});
export type WorkflowBodyT = Static<typeof WorkflowBody>;

export const WorkflowListEntry = Type.Object({
  id: Type.String(),
  name: Type.String(),
  active: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const NodeView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  typeVersion: Type.Optional(Type.Number()),
  position: Type.Tuple([Type.Number(), Type.Number()]),
  parameters: JsonObject,
  credentials: Type.Optional(Type.Record(Type.String(), Type.String())),
  continueOnFail: Type.Optional(Type.Boolean()),
  disabled: Type.Optional(Type.Boolean()),
});

export const WorkflowView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  active: Type.Boolean(),
  nodes: Type.Array(NodeView),
  connections: Anything,
  settings: JsonObject,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const ActivationView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  active: Type.Boolean(),
  updatedAt: Timestamp,
});

export const DeletedView = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });

/** Documented with the rules workflow-service.ts (WORKFLOW_LIST_SPEC) enforces; test/core/openapi-lint checks them. */
export const WorkflowListQuery = listQueryOf(
  {
    sortable: ['id', 'name', 'createdAt', 'updatedAt'],
    filters: { active: 'boolean', name: 'string' },
    projectable: ['id', 'name', 'active', 'createdAt', 'updatedAt'],
    defaultSort: 'id',
    defaultOrder: 'asc',
    defaultLimit: 100,
    maxLimit: 250,
  },
  Type.Object(
    {
      limit: Type.Optional(Type.Integer({ minimum: 1 })),
      offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_OFFSET })),
      sort: Type.Optional(Type.String()),
      order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
      fields: Type.Optional(Type.String()),
      cursor: Type.Optional(Type.String()),
      active: Type.Optional(Type.String({ description: 'true or false' })),
      name: Type.Optional(Type.String()),
    },
    { additionalProperties: Type.String() },
  ),
);

export const EXECUTION_STATUSES = ['new', 'running', 'success', 'error', 'waiting', 'canceled'] as const;

/** Documented with the rules execution-service.ts (EXECUTION_LIST_SPEC) enforces. */
export const ExecutionListQuery = listQueryOf(
  {
    sortable: ['id'],
    filters: { workflowId: 'string', status: EXECUTION_STATUSES },
    projectable: [
      'id',
      'workflowId',
      'finished',
      'mode',
      'status',
      'startedAt',
      'stoppedAt',
      'retryOf',
      'waitTill',
    ],
    defaultSort: 'id',
    defaultOrder: 'desc',
    defaultLimit: 20,
    maxLimit: 250,
  },
  Type.Object(
    {
      limit: Type.Optional(Type.Integer({ minimum: 1 })),
      cursor: Type.Optional(Type.String()),
      workflowId: Type.Optional(Type.String({ minLength: 1 })),
      status: Type.Optional(Type.String({ description: EXECUTION_STATUSES.join(' | ') })),
    },
    { additionalProperties: Type.String() },
  ),
);

export const ExecutionEntry = Type.Object({
  id: Type.String(),
  workflowId: Type.String(),
  finished: Type.Boolean(),
  mode: Type.String(),
  status: Type.String({ description: EXECUTION_STATUSES.join(' | ') }),
  startedAt: Timestamp,
  stoppedAt: Nullable(Timestamp),
  retryOf: Nullable(Type.String()),
  waitTill: Nullable(Timestamp),
});

const NodeRun = Type.Object({
  startTime: Type.String(),
  executionTime: Type.Number({ description: 'milliseconds' }),
  input: Anything,
  output: Anything,
  error: Type.Optional(Anything),
});

export const ExecutionView = Type.Object({
  ...ExecutionEntry.properties,
  resumeUrl: Nullable(
    Type.String({
      description:
        'While waiting for its resume URL: the signed URL that resumes it (as `$execution.resumeUrl`); treat it as a secret',
    }),
  ),
  workflowData: Anything,
  data: Type.Object({
    runData: Type.Record(Type.String(), Type.Array(NodeRun)),
    lastNodeExecuted: Nullable(Type.String()),
    error: Anything,
  }),
});

export const CREDENTIAL_TYPES = {
  httpHeaderAuth: ['name', 'value'],
  httpBasicAuth: ['user', 'password'],
  httpQueryAuth: ['name', 'value'],
  httpBearerAuth: ['token'],
  hmacSecret: ['secret'],
} as const;
export type CredentialType = keyof typeof CREDENTIAL_TYPES;

export const CredentialBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9 ._:/-]+$' }),
  type: Type.Enum(Object.keys(CREDENTIAL_TYPES) as CredentialType[]),
  data: Type.Record(Type.String(), Type.String({ maxLength: 10_000 }), { maxProperties: 10 }),
});
export type CredentialBodyT = Static<typeof CredentialBody>;

export const CredentialView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
