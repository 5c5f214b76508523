import { Type } from 'typebox';
import { assertNever } from '../../../../../core/errors.js';
import { defineNode, NodeOperationError } from '../../../engine/node-type.js';
import { type CheckLimits, DEFAULT_MAX_WAIT_MS, type ValidationProblem } from '../../../engine/types.js';

const UNIT_MS = { seconds: 1_000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 } as const;

/**
 * n8n's Wait (v1, 1.1): after a time interval, until a specific time, or until its resume URL
 * (`$execution.resumeUrl`) is called. A wait beyond WORKFLOW_MAX_WAIT_SECONDS is refused at save (static) or fails the node; n8n's
 * form resume and the webhook resume's extra options are refused at save.
 */
const N8nWaitParameters = Type.Object(
  {
    resume: Type.Enum(['timeInterval', 'specificTime', 'webhook'] as const, { default: 'timeInterval' }),
    amount: Type.Number({ minimum: 0, default: 1 }),
    unit: Type.Enum(['seconds', 'minutes', 'hours', 'days'] as const, { default: 'hours' }),
    dateTime: Type.Optional(Type.String({ minLength: 1 })),
    /**
     * The resume webhook's method and answer (n8n's, with `resume: 'webhook'`). Its resume URL takes
     * POST here and answers at once (`onReceived`); other methods and answers are refused at save.
     */
    httpMethod: Type.Optional(Type.Enum(['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT'] as const)),
    responseMode: Type.Optional(Type.Enum(['onReceived', 'lastNode', 'responseNode'] as const)),
    options: Type.Object({}, { additionalProperties: false, default: {} }),
  },
  { additionalProperties: false },
);

const tooLong = (maxWaitMs: number) =>
  `is beyond the longest wait allowed (${Math.floor(maxWaitMs / 1000)} s, WORKFLOW_MAX_WAIT_SECONDS)`;

/** Static parameters checked at save: a wait longer than the bound is refused before it can run. */
function checkWait(
  p: {
    resume: string;
    amount: unknown;
    unit: keyof typeof UNIT_MS;
    dateTime?: unknown;
    httpMethod?: string;
    responseMode?: string;
  },
  limits: CheckLimits,
): ValidationProblem[] {
  if (p.resume === 'webhook') {
    const problems: ValidationProblem[] = [];
    if (p.httpMethod !== undefined && p.httpMethod !== 'POST')
      problems.push({
        path: 'parameters.httpMethod',
        message: `'${p.httpMethod}' is not served here: the resume URL takes POST`,
      });
    if (p.responseMode !== undefined && p.responseMode !== 'onReceived')
      problems.push({
        path: 'parameters.responseMode',
        message: `'${p.responseMode}' is not served here: the resume call is answered at once ('onReceived')`,
      });
    return problems;
  }
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
export const n8nWaitNode = defineNode({
  type: 'n8n-nodes-base.wait',
  versions: [1, 1.1],
  schema: N8nWaitParameters,
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
