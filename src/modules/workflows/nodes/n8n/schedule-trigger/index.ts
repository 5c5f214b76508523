import { type Static, Type } from 'typebox';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, output } from '../../../engine/node-type.js';
import type { ValidationProblem } from '../../../engine/types.js';
import { cronProblem } from '../../../schedule/rules.js';

const Int = (minimum: number, maximum: number) => Type.Optional(Type.Integer({ minimum, maximum }));
/** An "at" field: n8n reads null as unset (`triggerAtMinute ?? …`), as exports sometimes carry it. */
const At = (minimum: number, maximum: number) =>
  Type.Optional(Type.Union([Type.Integer({ minimum, maximum }), Type.Null()]));

/** One rule: n8n's `rule.interval[]` entry (the fields of its `field`; the others are ignored by n8n too). */
const IntervalRule = Type.Object(
  {
    field: Type.Enum(['seconds', 'minutes', 'hours', 'days', 'weeks', 'months', 'cronExpression'] as const, {
      default: 'days',
    }),
    secondsInterval: Int(1, 59),
    minutesInterval: Int(1, 59),
    hoursInterval: Int(1, 23),
    daysInterval: Int(1, 365),
    weeksInterval: Int(1, 52),
    monthsInterval: Int(1, 12),
    triggerAtHour: At(0, 23),
    triggerAtMinute: At(0, 59),
    triggerAtDay: Type.Optional(
      Type.Array(Type.Integer({ minimum: 0, maximum: 6 }), { maxItems: 7, uniqueItems: true }),
    ),
    triggerAtDayOfMonth: At(1, 31),
    expression: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const ScheduleTriggerParameters = Type.Object(
  {
    rule: Type.Object(
      { interval: Type.Array(IntervalRule, { minItems: 1, maxItems: 20, default: [{ field: 'days' }] }) },
      { additionalProperties: false, default: { interval: [{ field: 'days' }] } },
    ),
  },
  { additionalProperties: false },
);

export type ScheduleTriggerParams = Static<typeof ScheduleTriggerParameters>;

/**
 * n8n's Schedule Trigger (v1–1.2): each rule fires the workflow while it is active, in the workflow's
 * `settings.timezone`. The scheduler (schedule/scheduler.ts) registers the rules at activation and
 * starts the runs; the node passes its fire item on.
 */
export const scheduleTriggerNode = defineNode({
  type: 'n8n-nodes-base.scheduleTrigger',
  versions: [1, 1.1, 1.2],
  schema: ScheduleTriggerParameters,
  trigger: true,
  inputs: 0,
  check(params) {
    const problems: ValidationProblem[] = [];
    params.rule.interval.forEach((rule, i) => {
      const at = `parameters.rule.interval[${i}]`;
      // The other fields may be expressions: n8n evaluates them when the workflow is activated (no
      // item then; `Math.random()` picks a minute), as the scheduler does here (scheduler.ts).
      if (isExpression(rule.field))
        problems.push({
          path: `${at}.field`,
          message: 'must be fixed: it decides which fields the rule has',
        });
      if (rule.field !== 'cronExpression' || isExpression(rule.expression)) return;
      const problem = typeof rule.expression === 'string' ? cronProblem(rule.expression) : 'is required';
      if (problem) problems.push({ path: `${at}.expression`, message: problem });
    });
    return problems;
  },
  async execute(ctx) {
    return output(ctx.items.length > 0 ? ctx.items : [{ json: {} }]);
  },
});
