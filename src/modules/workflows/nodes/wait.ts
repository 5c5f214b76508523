import { Type } from 'typebox';
import { assertNever } from '../../../core/errors.js';
import { defineNode, NodeOperationError } from '../engine/node-type.js';
import { type CheckLimits, DEFAULT_MAX_WAIT_MS, type ValidationProblem } from '../engine/types.js';

const UNIT_MS = { seconds: 1_000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 } as const;

export const WaitParameters = Type.Object({
  /** `timeInterval`: amount × unit; `specificTime`: until `dateTime`; `webhook`: until its resume URL is called. */
  resume: Type.Enum(['timeInterval', 'specificTime', 'webhook'] as const, { default: 'timeInterval' }),
  amount: Type.Number({ minimum: 0, default: 1 }),
  unit: Type.Enum(['seconds', 'minutes', 'hours', 'days'] as const, { default: 'hours' }),
  /** ISO 8601 date-time, for `specificTime`. */
  dateTime: Type.Optional(Type.String({ minLength: 1 })),
});

const tooLong = (maxWaitMs: number) =>
  `is beyond the longest wait allowed (${Math.floor(maxWaitMs / 1000)} s, WORKFLOW_MAX_WAIT_SECONDS)`;

/** Static parameters checked at save: a wait longer than the bound is refused before it can run. */
function checkWait(
  p: { resume: string; amount: unknown; unit: keyof typeof UNIT_MS; dateTime?: unknown },
  limits: CheckLimits,
): ValidationProblem[] {
  if (p.resume === 'timeInterval' && typeof p.amount === 'number') {
    if (!(p.amount * UNIT_MS[p.unit] <= limits.maxWaitMs))
      return [{ path: 'parameters.amount', message: tooLong(limits.maxWaitMs) }];
  }
  if (p.resume === 'specificTime' && typeof p.dateTime === 'string' && !p.dateTime.startsWith('=')) {
    const at = Date.parse(p.dateTime);
    if (Number.isNaN(at)) return [{ path: 'parameters.dateTime', message: 'is not a date' }];
    if (at - limits.now.getTime() > limits.maxWaitMs)
      return [{ path: 'parameters.dateTime', message: tooLong(limits.maxWaitMs) }];
  }
  return [];
}

/** Pauses the execution (outcome `waiting`); the service resumes it at `waitTill` or on its resume URL. */
export const waitNode = defineNode({
  type: 'wait',
  schema: WaitParameters,
  check: checkWait,
  async execute(ctx) {
    const p = await ctx.params(0);
    const now = ctx.deps.now().getTime();
    const maxWaitMs = ctx.deps.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    // Expressions decide the time only now: the bound applies again (a wait beyond it would never end).
    const bounded = (at: number): { kind: 'wait'; waitTill: Date } => {
      if (!(at - now <= maxWaitMs)) throw new NodeOperationError(`Wait: the time ${tooLong(maxWaitMs)}`);
      return { kind: 'wait', waitTill: new Date(at) };
    };
    switch (p.resume) {
      case 'timeInterval':
        return bounded(now + p.amount * UNIT_MS[p.unit]);
      case 'specificTime': {
        const at = p.dateTime === undefined ? Number.NaN : Date.parse(p.dateTime);
        if (Number.isNaN(at))
          throw new NodeOperationError(`Wait: dateTime '${p.dateTime ?? ''}' is not a date`);
        return bounded(at);
      }
      case 'webhook':
        return { kind: 'wait', waitTill: null };
      default:
        return assertNever(p.resume);
    }
  },
});
