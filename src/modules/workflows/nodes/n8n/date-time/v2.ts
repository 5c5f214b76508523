import { DateTime, type DateTimeUnit, type DurationUnit } from 'luxon';
import { type Static, Type } from 'typebox';
import { shownWhen } from '../../../engine/display-options.js';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { checkZone, parseDate, shift } from './parse-date.js';

const Units = ['year', 'month', 'week', 'day', 'hour', 'minute', 'second'] as const;
const DurationUnits = [
  'years',
  'quarters',
  'months',
  'weeks',
  'days',
  'hours',
  'minutes',
  'seconds',
  'milliseconds',
] as const;

/** n8n's default output field per operation. */
const OUTPUT_FIELD: Record<string, string> = {
  getCurrentDate: 'currentDate',
  addToDate: 'newDate',
  subtractFromDate: 'newDate',
  formatDate: 'formattedDate',
  roundDate: 'roundedDate',
  getTimeBetweenDates: 'timeDifference',
  extractDate: 'datePart',
};

/** Date parameters (`magnitude`, `date`, `startDate`, `endDate`): text, a timestamp, or null (Format passes null through). */
const ADD_OR_SUBTRACT = ['addToDate', 'subtractFromDate'];

const DateTimeV2Parameters = Type.Object(
  {
    operation: Type.Enum(
      [
        'getCurrentDate',
        'addToDate',
        'subtractFromDate',
        'formatDate',
        'roundDate',
        'getTimeBetweenDates',
        'extractDate',
      ] as const,
      { default: 'getCurrentDate' },
    ),
    notice: Type.Optional(Type.String(shownWhen({ operation: ['getCurrentDate'] }))),
    includeTime: Type.Boolean({ default: true, ...shownWhen({ operation: ['getCurrentDate'] }) }),
    outputFieldName: Type.Optional(Type.String()),
    magnitude: Type.Unknown({ default: '', ...shownWhen({ operation: ADD_OR_SUBTRACT }) }),
    // The date's name in n8n's v2 before its release (exports of that build still import in n8n).
    addToDate: Type.Optional(Type.Unknown()),
    subtractFromDate: Type.Optional(Type.Unknown()),
    // An option group of an early v2 draft that n8n's v2 no longer defines: accepted and ignored, as n8n does.
    additionalFields: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    timeUnit: Type.Enum(DurationUnits, { default: 'days', ...shownWhen({ operation: ADD_OR_SUBTRACT }) }),
    duration: Type.Number({ default: 0, ...shownWhen({ operation: ADD_OR_SUBTRACT }) }),
    date: Type.Unknown({
      default: '',
      ...shownWhen({ operation: ['formatDate', 'roundDate', 'extractDate'] }),
    }),
    format: Type.String({
      default: 'MM/dd/yyyy',
      maxLength: 1_000,
      ...shownWhen({ operation: ['formatDate'] }),
    }),
    customFormat: Type.String({
      default: '',
      maxLength: 1_000,
      ...shownWhen({ operation: ['formatDate'], format: ['custom'] }),
    }),
    mode: Type.Enum(['roundDown', 'roundUp'] as const, {
      default: 'roundDown',
      ...shownWhen({ operation: ['roundDate'] }),
    }),
    toNearest: Type.Enum(Units, {
      default: 'month',
      ...shownWhen({ operation: ['roundDate'], mode: ['roundDown'] }),
    }),
    to: Type.Literal('month', { default: 'month' }),
    startDate: Type.Unknown({ default: '', ...shownWhen({ operation: ['getTimeBetweenDates'] }) }),
    endDate: Type.Unknown({ default: '', ...shownWhen({ operation: ['getTimeBetweenDates'] }) }),
    units: Type.Array(Type.Enum([...Units, 'millisecond'] as const), {
      default: ['day'],
      ...shownWhen({ operation: ['getTimeBetweenDates'] }),
    }),
    part: Type.Enum(Units, { default: 'month', ...shownWhen({ operation: ['extractDate'] }) }),
    options: Type.Object(
      {
        includeInputFields: Type.Optional(Type.Boolean()),
        /** Get Current Date: a zone name; Format a Date: whether to use the workflow's zone. */
        timezone: Type.Optional(
          Type.Union(
            [Type.String(), Type.Boolean()],
            shownWhen({ '/operation': ['getCurrentDate', 'formatDate'] }),
          ),
        ),
        fromFormat: Type.Optional(
          Type.String({ maxLength: 1_000, ...shownWhen({ '/operation': ['formatDate'] }) }),
        ),
        isoString: Type.Optional(Type.Boolean(shownWhen({ '/operation': ['getTimeBetweenDates'] }))),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

type Params = Static<typeof DateTimeV2Parameters>;

/** The workflow's time zone as expressions see it (`settings.timezone`, else the platform's default). */
export async function workflowZone(ctx: {
  timezone?: string;
  evaluate(s: string, i: number): Promise<unknown>;
}) {
  // The runner gives it; read from `$now` otherwise (a sandbox call per run).
  if (ctx.timezone) return ctx.timezone;
  const zone = await ctx.evaluate('={{ $now.zoneName }}', 0);
  return typeof zone === 'string' && zone !== '' ? zone : 'UTC';
}

/**
 * n8n's Date & Time v2: current date, add/subtract, format (Luxon tokens), round, time between dates,
 * extract a part. Dates are read in the workflow's time zone as n8n does; results are written to
 * `outputFieldName` of a new item, or of a copy of the input item with `includeInputFields`.
 */
export const dateTimeV2Node = defineNode({
  type: 'n8n-nodes-base.dateTime',
  versions: [2],
  schema: DateTimeV2Parameters,
  async execute(ctx) {
    const zone = await workflowZone(ctx);
    const first = await ctx.params(0);
    const includeInput = first.options.includeInputFields === true;
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = i === 0 ? first : await ctx.params(i);
      const source = ctx.items[i] as Item;
      const json: Record<string, Json> = includeInput ? { ...source.json } : {};
      const field = p.outputFieldName ?? OUTPUT_FIELD[first.operation] ?? 'data';
      json[field] = operate(first.operation, p, zone, ctx.deps.now());
      out.push({ json, ...(includeInput && source.binary ? { binary: source.binary } : {}) });
    }
    return output(out);
  },
});

/** The date to add to or subtract from: `magnitude`, else the pre-release name of that operation. */
function draftDate(p: Params, operation: string): unknown {
  const draft = operation === 'addToDate' ? p.addToDate : p.subtractFromDate;
  return p.magnitude === '' && draft !== undefined ? draft : p.magnitude;
}

function operate(operation: string, p: Params, zone: string, now: Date): Json {
  switch (operation) {
    case 'getCurrentDate': {
      const tz = checkZone(
        typeof p.options.timezone === 'string' && p.options.timezone ? p.options.timezone : zone,
      );
      const current = DateTime.fromJSDate(now).setZone(tz);
      return (p.includeTime ? current : current.startOf('day')).toString();
    }
    case 'addToDate':
    case 'subtractFromDate':
      return shift(
        parseDate(draftDate(p, operation), { timezone: zone }),
        p.timeUnit,
        p.duration,
        operation === 'addToDate' ? 1 : -1,
      ).toString();
    case 'formatDate': {
      if (p.date === null || p.date === undefined) return null;
      const date = parseDate(p.date, {
        timezone: p.options.timezone === true ? zone : undefined,
        fromFormat: p.options.fromFormat,
      });
      return date.toFormat(p.format === 'custom' ? p.customFormat : p.format);
    }
    case 'roundDate': {
      const date = parseDate(p.date, { timezone: zone });
      if (p.mode === 'roundDown') return date.startOf(p.toNearest as DateTimeUnit).toString();
      return date
        .plus({ [p.to]: 1 })
        .startOf(p.to as DateTimeUnit)
        .toString();
    }
    case 'getTimeBetweenDates': {
      const start = parseDate(p.startDate, { timezone: zone });
      const end = parseDate(p.endDate, { timezone: zone });
      const duration = end.diff(start, p.units as DurationUnit[]);
      return p.options.isoString === true ? duration.toString() : (duration.toObject() as Json);
    }
    default: {
      const date = parseDate(p.date, { timezone: zone });
      return p.part === 'week' ? date.weekNumber : date.get(p.part as Exclude<typeof p.part, 'week'>);
    }
  }
}
