import { Type } from 'typebox';
import { defineNode, NodeOperationError } from '../../../engine/node-type.js';

const StopAndErrorParameters = Type.Object(
  {
    errorType: Type.Union([Type.Literal('errorMessage'), Type.Literal('errorObject')], {
      default: 'errorMessage',
    }),
    errorMessage: Type.String({ default: '' }),
    /** JSON text of an object whose properties become the error's (`message`, `description`, …). */
    errorObject: Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())], { default: '' }),
  },
  { additionalProperties: false },
);

/** n8n's Stop and Error: fails the execution with the given message or error object. */
export const n8nStopAndErrorNode = defineNode({
  type: 'n8n-nodes-base.stopAndError',
  versions: [1],
  schema: StopAndErrorParameters,
  check(p) {
    if (p.errorType === 'errorMessage' && p.errorMessage === '')
      return [{ path: 'parameters.errorMessage', message: 'is required' }];
    if (p.errorType === 'errorObject' && p.errorObject === '')
      return [{ path: 'parameters.errorObject', message: 'is required' }];
    return [];
  },
  async execute(ctx) {
    const p = await ctx.params(0);
    if (p.errorType === 'errorMessage') throw new NodeOperationError(p.errorMessage);
    const fields = errorFields(p.errorObject);
    // n8n words a missing message with the workflow's id and name, which nodes do not see here.
    const message =
      typeof fields.message === 'string' ? fields.message : `Workflow has failed at node '${ctx.node.name}'`;
    const description = typeof fields.description === 'string' ? fields.description : undefined;
    throw new NodeOperationError(message, description !== undefined ? { description } : {});
  },
});

function errorFields(value: string | Record<string, unknown>): Record<string, unknown> {
  if (typeof value !== 'string') return value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new NodeOperationError('Error Object is not valid JSON', {
      description: 'The Error Object parameter must be a JSON object, e.g. {"message": "…"}',
    });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new NodeOperationError('Error Object must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}
