import { DateTime } from 'luxon';
import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { setField } from '../merge/json.js';
import { momentToLuxon } from './moment-format.js';
import { checkZone, shift } from './parse-date.js';
import { workflowZone } from './v2.js';

const DateTimeV1Parameters = Type.Object(
  {
    noticeDateTime: Type.Optional(Type.String()),
    action: Type.Enum(['format', 'calculate'] as const, { default: 'format' }),
    value: Type.Unknown({ default: '' }),
    dataPropertyName: Type.String({ default: 'data', minLength: 1 }),
    custom: Type.Boolean({ default: false }),
    toFormat: Type.String({ default: 'MM/DD/YYYY', maxLength: 1_000 }),
    operation: Type.Enum(['add', 'subtract'] as const, { default: 'add' }),
    duration: Type.Number({ default: 0, minimum: 0 }),
    timeUnit: Type.Enum(
      [
        'quarters',
        'years',
        'months',
        'weeks',
        'days',
        'hours',
        'minutes',
        'seconds',
        'milliseconds',
      ] as const,
      { default: 'days' },
    ),
    options: Type.Object(
      {
        fromFormat: Type.Optional(Type.String({ maxLength: 1_000 })),
        fromTimezone: Type.Optional(Type.String()),
        toTimezone: Type.Optional(Type.String()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** Luxon's name for the process zone (`TZ`), which moment's defaults in n8n's v1 read. */
const SERVER_ZONE = 'system';

/** Digits of a millisecond timestamp from 2001 on: shorter integers are seconds (n8n's rule). */
const MILLIS_DIGITS = 12;

/**
 * n8n's Date & Time v1: `format` a date with moment tokens (optionally between time zones), or
 * `calculate` one (add/subtract a duration, ISO output in UTC). Moment's formats are translated to
 * Luxon's. Where n8n v1 reads or writes a zoneless date in the server's local zone (moment's default),
 * the platform does too: the process zone (`TZ`), UTC on a server that sets none.
 */
export const dateTimeV1Node = defineNode({
  type: 'n8n-nodes-base.dateTime',
  versions: [1],
  schema: DateTimeV1Parameters,
  async execute(ctx) {
    const zone = await workflowZone(ctx);
    const action = (await ctx.params(0)).action;
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      const source = ctx.items[i] as Item;
      let value: Json;
      if (action === 'format') {
        if (p.value === undefined) continue;
        value = formatV1(p.value, p.toFormat, p.options, zone);
      } else {
        const date = p.options.fromFormat
          ? byFormat(String(p.value), p.options.fromFormat, SERVER_ZONE)
          : byJsDate(p.value);
        value = shift(date, p.timeUnit, p.duration, p.operation === 'add' ? 1 : -1)
          .toUTC()
          .toISO() as string;
      }
      const json = structuredClone(source.json);
      setField(json, p.dataPropertyName, value);
      out.push({ json, ...(source.binary ? { binary: source.binary } : {}) });
    }
    return output(out);
  },
});

function formatV1(
  raw: unknown,
  toFormat: string,
  options: {
    fromFormat?: string | undefined;
    fromTimezone?: string | undefined;
    toTimezone?: string | undefined;
  },
  workflowZone: string,
): string {
  let value = raw;
  if (typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value))) value = Number(value);
  if (typeof value === 'number' && !Number.isInteger(value)) value = value * 1000;
  const zoned = options.fromTimezone !== undefined || options.toTimezone !== undefined;
  let date: DateTime;
  if (typeof value === 'number' && Number.isInteger(value)) {
    date =
      String(value).length < MILLIS_DIGITS
        ? DateTime.fromSeconds(value, { zone: SERVER_ZONE })
        : DateTime.fromMillis(value, { zone: SERVER_ZONE });
  } else {
    const from = zoned ? checkZone(options.fromTimezone || workflowZone) : SERVER_ZONE;
    date = options.fromFormat
      ? byFormat(String(value), options.fromFormat, from)
      : byDefault(value, from, zoned);
  }
  if (!date.isValid)
    throw new NodeOperationError(
      'The date input format could not be recognized. Please set the "From Format" field',
    );
  if (zoned) date = date.setZone(checkZone(options.toTimezone || workflowZone));
  if (toFormat === 'X') return String(Math.floor(date.toSeconds()));
  if (toFormat === 'x') return String(date.toMillis());
  return date.toFormat(momentToLuxon(toFormat));
}

function byFormat(value: string, fromFormat: string, zone: string): DateTime {
  const date = DateTime.fromFormat(value, momentToLuxon(fromFormat), { zone });
  if (date.isValid) return date;
  throw new NodeOperationError(
    'Date input cannot be parsed. Please recheck the value and the "From Format" field.',
  );
}

/**
 * `calculate` without a format reads the value as n8n does, through JavaScript's `Date`: an ISO date
 * alone is UTC, anything else zoneless is the server's zone.
 */
function byJsDate(value: unknown): DateTime {
  const text = typeof value === 'number' ? value : String(value ?? '');
  const ms = typeof text === 'string' && text.length > 256 ? Number.NaN : new Date(text).getTime();
  if (Number.isNaN(ms))
    throw new NodeOperationError(
      'Unrecognized date input. Please specify a format in the "From Format" field.',
    );
  return DateTime.fromMillis(ms, { zone: SERVER_ZONE });
}

/**
 * moment's reading of a value without a format: ISO in `zone`; anything else through JavaScript's
 * `Date`, which moment-timezone (`zoned`) asks for in UTC and plain moment in the server's zone.
 */
function byDefault(value: unknown, zone: string, zoned: boolean): DateTime {
  const text = typeof value === 'number' ? value : String(value ?? '');
  if (typeof text === 'string' && text.length > 256)
    throw new NodeOperationError(
      'Unrecognized date input. Please specify a format in the "From Format" field.',
    );
  let date = typeof text === 'string' ? DateTime.fromISO(text, { zone }) : DateTime.invalid('number');
  if (!date.isValid) {
    const ms = typeof text === 'number' ? text : Date.parse(zoned ? `${text} UTC` : text);
    date = Number.isNaN(ms) ? date : DateTime.fromMillis(ms, { zone });
  }
  if (!date.isValid)
    throw new NodeOperationError(
      'Unrecognized date input. Please specify a format in the "From Format" field.',
    );
  return date;
}
