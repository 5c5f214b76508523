import { type Static, Type } from 'typebox';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, type ListenerContext, NodeOperationError, output } from '../../../engine/node-type.js';
import type { ValidationProblem } from '../../../engine/types.js';
import { locatorValue, ResourceLocator } from '../sql/parameters.js';
import { ruleNames } from './ddl.js';
import { channelOf, listen, type PostgresTriggerParams } from './listen.js';

const PostgresTriggerParameters = Type.Object(
  {
    triggerMode: Type.Enum(['createTrigger', 'listenTrigger'] as const, { default: 'createTrigger' }),
    schema: Type.Optional(ResourceLocator),
    tableName: Type.Optional(ResourceLocator),
    channelName: Type.String({ default: '', maxLength: 63 }),
    firesOn: Type.Enum(['INSERT', 'UPDATE', 'DELETE'] as const, { default: 'INSERT' }),
    additionalFields: Type.Object(
      {
        channelName: Type.Optional(Type.String({ maxLength: 63 })),
        functionName: Type.Optional(Type.String({ maxLength: 130 })),
        replaceIfExists: Type.Optional(Type.Boolean()),
        triggerName: Type.Optional(Type.String({ maxLength: 63 })),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);
type Params = Static<typeof PostgresTriggerParameters>;

/** The listener's view of the parameters; throws the first problem. */
function paramsOf(p: Params): PostgresTriggerParams {
  const create = p.triggerMode === 'createTrigger';
  const table = locatorValue(p.tableName);
  if (create && table === '') throw new NodeOperationError('The table to watch is not set');
  if (!create && p.channelName.trim() === '') throw new NodeOperationError('The channel name is not set');
  const extra = p.additionalFields;
  return {
    triggerMode: p.triggerMode,
    channelName: p.channelName,
    additionalChannel: extra.channelName ?? '',
    rule: create
      ? {
          schema: locatorValue(p.schema) || 'public',
          table,
          firesOn: p.firesOn,
          functionName: extra.functionName,
          triggerName: extra.triggerName,
          replaceIfExists: extra.replaceIfExists,
        }
      : null,
  };
}

function problemsOf(p: Params, nodeId = 'node'): ValidationProblem[] {
  for (const [name, value] of Object.entries(p))
    if (isExpression(value))
      return [{ path: `parameters.${name}`, message: 'must be fixed: the trigger listens before any run' }];
  try {
    const listening = paramsOf(p);
    channelOf(listening, nodeId);
    if (listening.rule) ruleNames(listening.rule, nodeId);
    return [];
  } catch (err) {
    return [{ path: 'parameters', message: (err as Error).message }];
  }
}

/**
 * n8n's Postgres Trigger (v1, credential `postgres`): LISTEN on a channel, or create a trigger function
 * on a table that sends each inserted, updated or deleted row as JSON (dropped again at deactivation).
 * Each notification starts one execution with n8n's item `{processId, channel, payload, …}`.
 */
export const postgresTriggerNode = defineNode({
  type: 'n8n-nodes-base.postgresTrigger',
  versions: [1],
  schema: PostgresTriggerParameters,
  trigger: true,
  inputs: 0,
  check: (p) => problemsOf(p),
  listener: {
    start: (ctx: ListenerContext) => listen(ctx, paramsOf(ctx.parameters as Params)),
  },
  async execute(ctx) {
    return output(ctx.items);
  },
});
