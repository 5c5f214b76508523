import { DateTime } from 'luxon';
import { Type } from 'typebox';
import { NodeOperationError } from '../../../engine/node-type.js';

/** n8n's iCal event parameters (the iCalendar node's createEventFile, Convert to File's iCal). */
export const EventParameters = {
  title: Type.String({ default: '' }),
  start: Type.String({ default: '' }),
  end: Type.String({ default: '' }),
  allDay: Type.Boolean({ default: false }),
  additionalFields: Type.Object(
    {
      attendeesUi: Type.Optional(
        Type.Object({
          attendeeValues: Type.Optional(
            Type.Array(
              Type.Object({
                name: Type.Optional(Type.String()),
                email: Type.Optional(Type.String()),
                rsvp: Type.Optional(Type.Boolean()),
              }),
            ),
          ),
        }),
      ),
      busyStatus: Type.Optional(Type.String()),
      calName: Type.Optional(Type.String()),
      description: Type.Optional(Type.String()),
      fileName: Type.Optional(Type.String()),
      geolocationUi: Type.Optional(
        Type.Object({
          geolocationValues: Type.Optional(Type.Object({ lat: Type.Unknown(), lon: Type.Unknown() })),
        }),
      ),
      location: Type.Optional(Type.String()),
      recurrenceRule: Type.Optional(Type.String()),
      organizerUi: Type.Optional(
        Type.Object({
          organizerValues: Type.Optional(
            Type.Object({ name: Type.Optional(Type.String()), email: Type.Optional(Type.String()) }),
          ),
        }),
      ),
      sequence: Type.Optional(Type.Number()),
      status: Type.Optional(Type.String()),
      uid: Type.Optional(Type.String()),
      url: Type.Optional(Type.String()),
      useWorkflowTimezone: Type.Optional(Type.Boolean()),
    },
    { default: {} },
  ),
};

export interface EventInput {
  title: string;
  start: string;
  end: string;
  allDay: boolean;
  additionalFields: Record<string, unknown> & {
    attendeesUi?: { attendeeValues?: Array<{ name?: string; email?: string; rsvp?: boolean }> };
    organizerUi?: { organizerValues?: { name?: string; email?: string } };
    geolocationUi?: { geolocationValues?: { lat: unknown; lon: unknown } };
  };
}

/** RFC 5545 text escaping and 75-octet line folding. */
const text = (s: string) =>
  s.replace(/\\/g, '\\\\').replace(/;/g, '\\;').replace(/,/g, '\\,').replace(/\r?\n/g, '\\n');
function fold(line: string): string {
  const parts: string[] = [];
  let rest = line;
  while (Buffer.byteLength(rest) > 75) {
    let cut = 75;
    while (Buffer.byteLength(rest.slice(0, cut)) > 75) cut--;
    parts.push(rest.slice(0, cut));
    rest = ` ${rest.slice(cut)}`;
  }
  parts.push(rest);
  return parts.join('\r\n');
}

function instant(value: string, what: string, zone: string): DateTime {
  const dt = DateTime.fromISO(value, { zone });
  if (!dt.isValid)
    throw new NodeOperationError(`Invalid ${what} date '${value}'`, {
      description: dt.invalidExplanation ?? undefined,
    });
  return dt;
}

/**
 * One VEVENT in a VCALENDAR, as n8n's iCalendar node writes it (the `ics` package's layout: UTC times,
 * DATE values for all-day events, the end of an all-day event the day after). `now` stamps DTSTAMP.
 */
export function eventFile(e: EventInput, now: Date, zone = 'UTC', uid?: string): string {
  const f = e.additionalFields;
  const start = instant(e.start, 'start', zone);
  let end = instant(e.end, 'end', zone);
  if (end < start) throw new NodeOperationError('The end date is before the start date');
  const utc = (d: DateTime) => d.toUTC().toFormat("yyyyMMdd'T'HHmmss'Z'");
  const lines = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'CALSCALE:GREGORIAN', 'PRODID:n8n', 'METHOD:PUBLISH'];
  if (f.calName) lines.push(`X-WR-CALNAME:${text(String(f.calName))}`);
  lines.push('BEGIN:VEVENT');
  lines.push(`UID:${String(f.uid ?? uid ?? '')}`);
  if (f.title !== undefined || e.title) lines.push(`SUMMARY:${text(e.title)}`);
  lines.push(`DTSTAMP:${utc(DateTime.fromJSDate(now))}`);
  if (e.allDay) {
    if (+end === +start) end = end.plus({ days: 1 });
    lines.push(
      `DTSTART;VALUE=DATE:${start.toFormat('yyyyMMdd')}`,
      `DTEND;VALUE=DATE:${end.toFormat('yyyyMMdd')}`,
    );
  } else lines.push(`DTSTART:${utc(start)}`, `DTEND:${utc(end)}`);
  if (f.description) lines.push(`DESCRIPTION:${text(String(f.description))}`);
  if (f.location) lines.push(`LOCATION:${text(String(f.location))}`);
  if (f.url) lines.push(`URL:${String(f.url)}`);
  if (f.status) lines.push(`STATUS:${String(f.status)}`);
  if (f.busyStatus) lines.push(`X-MICROSOFT-CDO-BUSYSTATUS:${String(f.busyStatus)}`);
  if (f.sequence !== undefined) lines.push(`SEQUENCE:${Number(f.sequence)}`);
  if (f.recurrenceRule) lines.push(`RRULE:${String(f.recurrenceRule)}`);
  const geo = f.geolocationUi?.geolocationValues;
  if (geo) lines.push(`GEO:${Number(geo.lat)};${Number(geo.lon)}`);
  const org = f.organizerUi?.organizerValues;
  if (org?.email) lines.push(`ORGANIZER;CN=${text(org.name ?? '')}:MAILTO:${org.email}`);
  for (const a of f.attendeesUi?.attendeeValues ?? []) {
    if (!a.email) continue;
    lines.push(`ATTENDEE;RSVP=${a.rsvp ? 'TRUE' : 'FALSE'};CN=${text(a.name ?? '')}:MAILTO:${a.email}`);
  }
  lines.push('END:VEVENT', 'END:VCALENDAR');
  return `${lines.map(fold).join('\r\n')}\r\n`;
}
