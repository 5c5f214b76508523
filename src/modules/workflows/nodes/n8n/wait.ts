import { Type } from 'typebox';
import { defineNode } from '../../engine/node-type.js';
import { waitNode } from '../wait.js';

/**
 * n8n's Wait (v1, 1.1): after a time interval, until a specific time, or until its resume URL
 * (`$execution.resumeUrl`) is called. The same behaviour and bounds as the platform's `wait`; n8n's
 * form resume and the webhook resume's extra options are refused at save.
 */
export const N8nWaitParameters = Type.Object(
  {
    resume: Type.Enum(['timeInterval', 'specificTime', 'webhook'] as const, { default: 'timeInterval' }),
    amount: Type.Number({ minimum: 0, default: 1 }),
    unit: Type.Enum(['seconds', 'minutes', 'hours', 'days'] as const, { default: 'hours' }),
    dateTime: Type.Optional(Type.String({ minLength: 1 })),
    options: Type.Object({}, { additionalProperties: false, default: {} }),
  },
  { additionalProperties: false },
);

export const n8nWaitNode = defineNode({
  ...(waitNode as unknown as Parameters<typeof defineNode<typeof N8nWaitParameters>>[0]),
  type: 'n8n-nodes-base.wait',
  versions: [1, 1.1],
  schema: N8nWaitParameters,
});
