import { type Static, Type } from 'typebox';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, output } from '../../../engine/node-type.js';
import type { ValidationProblem } from '../../../engine/types.js';
import { cronProblem } from '../../../schedule/rules.js';

export const TriggerTime = Type.Object(
  {
    mode: Type.Enum(
      ['everyMinute', 'everyHour', 'everyDay', 'everyWeek', 'everyMonth', 'everyX', 'custom'] as const,
      { default: 'everyDay' },
    ),
    hour: Type.Integer({ minimum: 0, maximum: 23, default: 14 }),
    minute: Type.Integer({ minimum: 0, maximum: 59, default: 0 }),
    dayOfMonth: Type.Integer({ minimum: 1, maximum: 31, default: 1 }),
    weekday: Type.Union([Type.String({ pattern: '^[0-6]$' }), Type.Integer({ minimum: 0, maximum: 6 })], {
      default: '1',
    }),
    value: Type.Integer({ minimum: 1, maximum: 1000, default: 2 }),
    unit: Type.Enum(['minutes', 'hours'] as const, { default: 'hours' }),
    cronExpression: Type.String({ maxLength: 200, default: '* * * * * *' }),
  },
  { additionalProperties: false },
);

export const CronParameters = Type.Object(
  {
    triggerTimes: Type.Object(
      { item: Type.Array(TriggerTime, { maxItems: 20, default: [] }) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

type TriggerTimeT = Static<typeof TriggerTime>;

/** n8n's conversion of one trigger time to a six-field cron expression (seconds first; second 0). */
export function cronExpressionOf(t: TriggerTimeT): string {
  switch (t.mode) {
    case 'everyMinute':
      return '0 * * * * *';
    case 'everyHour':
      return `0 ${t.minute} * * * *`;
    case 'everyDay':
      return `0 ${t.minute} ${t.hour} * * *`;
    case 'everyWeek':
      return `0 ${t.minute} ${t.hour} * * ${t.weekday}`;
    case 'everyMonth':
      return `0 ${t.minute} ${t.hour} ${t.dayOfMonth} * *`;
    case 'everyX':
      return t.unit === 'minutes' ? `0 */${t.value} * * * *` : `0 0 */${t.value} * * *`;
    case 'custom':
      return t.cronExpression;
  }
}

/**
 * n8n's legacy Cron node (v1): each trigger time fires the active workflow through the scheduler (as a
 * Schedule Trigger's cron rule, in the workflow's time zone); a fire starts the run with one empty item,
 * as n8n's Cron does.
 */
export const cronNode = defineNode({
  type: 'n8n-nodes-base.cron',
  versions: [1],
  schema: CronParameters,
  trigger: true,
  inputs: 0,
  check(params) {
    const problems: ValidationProblem[] = [];
    params.triggerTimes.item.forEach((t, i) => {
      const at = `parameters.triggerTimes.item[${i}]`;
      for (const [name, value] of Object.entries(t))
        if (isExpression(value))
          problems.push({
            path: `${at}.${name}`,
            message: 'must be fixed: a schedule is registered before any run',
          });
      const problem = cronProblem(cronExpressionOf(t));
      if (problem) problems.push({ path: `${at}.cronExpression`, message: problem });
    });
    return problems;
  },
  async execute() {
    return output([{ json: {} }]);
  },
});
