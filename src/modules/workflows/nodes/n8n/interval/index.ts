import { Type } from 'typebox';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, output } from '../../../engine/node-type.js';
import type { ValidationProblem } from '../../../engine/types.js';

export const IntervalParameters = Type.Object(
  {
    interval: Type.Integer({ minimum: 1, default: 1 }),
    unit: Type.Enum(['seconds', 'minutes', 'hours'] as const, { default: 'seconds' }),
  },
  { additionalProperties: false },
);

const SECONDS = { seconds: 1, minutes: 60, hours: 3600 } as const;

/**
 * The interval as a six-field cron expression, or null when cron cannot say it: n8n's Interval is a
 * timer from activation; here it fires on the clock's multiples (every 15 s: :00, :15, …), which is the
 * same rate for every interval that divides a minute, an hour or a day.
 */
export function intervalCron(interval: number, unit: 'seconds' | 'minutes' | 'hours'): string | null {
  const s = interval * SECONDS[unit];
  if (s < 60 && 60 % s === 0) return `*/${s} * * * * *`;
  if (s % 60 === 0 && s < 3600 && 3600 % s === 0) return `0 */${s / 60} * * * *`;
  if (s % 3600 === 0 && s <= 86_400 && 86_400 % s === 0) return `0 0 */${s / 3600} * * *`;
  return null;
}

/** n8n's legacy Interval node (v1): fires the active workflow every N seconds, minutes or hours. */
export const intervalNode = defineNode({
  type: 'n8n-nodes-base.interval',
  versions: [1],
  schema: IntervalParameters,
  trigger: true,
  inputs: 0,
  check(params) {
    const problems: ValidationProblem[] = [];
    for (const [name, value] of Object.entries(params))
      if (isExpression(value))
        problems.push({
          path: `parameters.${name}`,
          message: 'must be fixed: a schedule is registered before any run',
        });
    if (problems.length === 0 && intervalCron(params.interval, params.unit) === null)
      problems.push({
        path: 'parameters.interval',
        message: `every ${params.interval} ${params.unit} cannot be scheduled here: use an interval that divides a minute, an hour or a day`,
      });
    return problems;
  },
  async execute() {
    return output([{ json: {} }]);
  },
});
