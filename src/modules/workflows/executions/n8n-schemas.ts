import { Type } from 'typebox';
import type { ListSpec } from '../../../core/http/list-query.js';
import { ListQuery, listQueryOf, Nullable } from '../../../core/http/schemas.js';
import { ExecutionEntry } from '../schemas.js';

/**
 * n8n's execution statuses, as its `status` filter takes them. The platform stores `new`, `running`,
 * `success`, `error`, `waiting` and `canceled`; a run cut off by a crash is stored (and shown) as
 * `error` with a message saying so, which `crashed` selects; nothing is ever `unknown`.
 */
const N8N_EXECUTION_STATUSES = [
  'canceled',
  'crashed',
  'error',
  'new',
  'running',
  'success',
  'unknown',
  'waiting',
] as const;
export type N8nExecutionStatus = (typeof N8N_EXECUTION_STATUSES)[number];

const IncludeData = Type.Boolean({
  description:
    "With the run data (`data`, n8n's structure) and the workflow as it ran (`workflowData`). Default: false with n8n's `X-N8N-API-KEY` and the platform's headers, true with the specification's `X-WORKFLOW-API-KEY` (its execution detail carries both)",
});

/** The list rules of `GET /api/v1/executions`: the service enforces them, the document shows them. */
export const EXECUTION_LIST_SPEC: ListSpec = {
  columns: { workflowId: 'workflow_id', status: 'status', mode: 'mode' },
  sortable: ['id'],
  // `startedAfter`/`startedBefore` are a range (the service takes them out before the list helper).
  filters: {
    workflowId: 'string',
    status: N8N_EXECUTION_STATUSES,
    mode: 'string',
    startedAfter: 'string',
    startedBefore: 'string',
  },
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
    'data',
  ],
  defaultSort: 'id',
  defaultOrder: 'desc',
  defaultLimit: 20,
  maxLimit: 250,
};

export const ExecutionListQuery = listQueryOf(
  // `includeData` is documented beside the filters; the service takes it off before the list helper.
  // So is `annotationTags` (n8n's executions list filter: any of these tag ids, comma-separated).
  {
    ...EXECUTION_LIST_SPEC,
    filters: { ...EXECUTION_LIST_SPEC.filters, includeData: 'boolean', annotationTags: 'string' },
  },
  Type.Object(
    {
      ...ListQuery.properties,
      workflowId: Type.Optional(Type.String({ minLength: 1 })),
      status: Type.Optional(Type.String({ description: N8N_EXECUTION_STATUSES.join(' | ') })),
      mode: Type.Optional(
        Type.String({ description: 'How it started: manual, trigger, webhook, retry, integrated, error, …' }),
      ),
      startedAfter: Type.Optional(
        Type.String({
          description: 'Started at or after this ISO 8601 date or date-time (as the bulk stop names it)',
        }),
      ),
      startedBefore: Type.Optional(
        Type.String({ description: 'Started before this ISO 8601 date or date-time' }),
      ),
      includeData: Type.Optional(IncludeData),
      annotationTags: Type.Optional(
        Type.String({
          minLength: 1,
          description: 'Tag ids, comma-separated: executions carrying any of them',
        }),
      ),
    },
    { additionalProperties: Type.String() },
  ),
);

export const ExecutionGetQuery = Type.Object(
  { includeData: Type.Optional(IncludeData) },
  { additionalProperties: false },
);

/** Routes that take no query parameters: any given is a 400 naming it, never silently ignored. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/** n8n's binary data of an item: the bytes (base64) and their metadata. */
const BinaryData = Type.Object({
  data: Type.String({ description: 'The bytes, base64' }),
  mimeType: Type.String(),
  fileName: Type.Optional(Type.String()),
  fileExtension: Type.Optional(Type.String()),
  fileType: Type.Optional(Type.String()),
  fileSize: Type.Optional(Type.String({ description: 'Human-readable, as n8n shows it' })),
});

const Item = Type.Object({
  json: Type.Record(Type.String(), Type.Unknown()),
  binary: Type.Optional(
    Type.Record(Type.String(), BinaryData, { description: 'Binary data by property name' }),
  ),
  pairedItem: Type.Optional(
    Type.Object(
      { item: Type.Integer(), input: Type.Optional(Type.Integer()) },
      { description: 'The input item this one came from (n8n lineage)' },
    ),
  ),
});

/** Where one input of a node run came from. */
const RunSource = Nullable(
  Type.Object({
    previousNode: Type.String(),
    previousNodeOutput: Type.Integer(),
    previousNodeRun: Type.Integer(),
  }),
);

/** One run of one node, as n8n's ITaskData. */
const TaskData = Type.Object({
  startTime: Type.Number({ description: 'Epoch milliseconds (n8n)' }),
  executionTime: Type.Number({ description: 'milliseconds' }),
  executionStatus: Type.Union([Type.Literal('success'), Type.Literal('error')]),
  data: Type.Object({
    main: Type.Array(Nullable(Type.Array(Item)), { description: 'Output items per output index' }),
  }),
  error: Type.Optional(Type.Unknown()),
  logs: Type.Optional(Type.Unknown()),
  source: Type.Optional(
    Type.Array(RunSource, { description: 'Per input: the node run its items came from' }),
  ),
});

/** n8n's `IRunExecutionData`, the part its tooling reads. */
const N8nExecutionData = Type.Object({
  resultData: Type.Object({
    runData: Type.Record(Type.String(), Type.Array(TaskData)),
    lastNodeExecuted: Nullable(Type.String()),
    error: Nullable(Type.Unknown()),
  }),
});

export const ExecutionListItem = Type.Object({
  ...ExecutionEntry.properties,
  data: Type.Optional(N8nExecutionData),
});

export const ExecutionDetail = Type.Object({
  ...ExecutionEntry.properties,
  resumeUrl: Nullable(
    Type.String({
      description:
        'While waiting for its resume URL: the signed URL that resumes it (as `$execution.resumeUrl`); treat it as a secret',
    }),
  ),
  workflowData: Type.Optional(Type.Unknown()),
  data: Type.Optional(N8nExecutionData),
});

/** n8n's `POST /executions/stop` body: which not-yet-ended executions to stop. */
export const StopManyBody = Type.Object(
  {
    status: Type.Array(
      Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('waiting')]),
      {
        minItems: 1,
        maxItems: 3,
        description: "Statuses to stop (n8n's `queued` is an execution not started yet)",
      },
    ),
    workflowId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    startedAfter: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'ISO 8601 date-time' }),
    ),
    startedBefore: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'ISO 8601 date-time' }),
    ),
  },
  { additionalProperties: false },
);

export const StopManyView = Type.Object({
  stopped: Type.Integer({ description: 'How many executions this call stopped' }),
});
