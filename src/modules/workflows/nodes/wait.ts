import { Type } from 'typebox';
import { assertNever } from '../../../core/errors.js';
import { defineNode, NodeOperationError } from '../engine/node-type.js';

const UNIT_MS = { seconds: 1_000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 } as const;

export const WaitParameters = Type.Object({
  /** `timeInterval`: amount × unit; `specificTime`: until `dateTime`; `webhook`: until its resume URL is called. */
  resume: Type.Enum(['timeInterval', 'specificTime', 'webhook'] as const, { default: 'timeInterval' }),
  amount: Type.Number({ minimum: 0, default: 1 }),
  unit: Type.Enum(['seconds', 'minutes', 'hours', 'days'] as const, { default: 'hours' }),
  /** ISO 8601 date-time, for `specificTime`. */
  dateTime: Type.Optional(Type.String({ minLength: 1 })),
});

/** Pauses the execution (outcome `waiting`); the service resumes it at `waitTill` or on its resume URL. */
export const waitNode = defineNode({
  type: 'wait',
  schema: WaitParameters,
  async execute(ctx) {
    const p = await ctx.params(0);
    switch (p.resume) {
      case 'timeInterval':
        return { kind: 'wait', waitTill: new Date(ctx.deps.now().getTime() + p.amount * UNIT_MS[p.unit]) };
      case 'specificTime': {
        const at = p.dateTime === undefined ? Number.NaN : Date.parse(p.dateTime);
        if (Number.isNaN(at))
          throw new NodeOperationError(`Wait: dateTime '${p.dateTime ?? ''}' is not a date`);
        return { kind: 'wait', waitTill: new Date(at) };
      }
      case 'webhook':
        return { kind: 'wait', waitTill: null };
      default:
        return assertNever(p.resume);
    }
  },
});
