import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { binaryOf } from '../../../engine/binary.js';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

type Step = { type: string; typeVersion: number; parameters: Record<string, unknown> };

async function chain(items: Item[], ...steps: Step[]) {
  const nodes = [
    { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
    ...steps.map((s, i) => ({ name: `N${i}`, ...s })),
  ];
  const edges = steps.map((_, i): [string, string] => [i === 0 ? 'T' : `N${i - 1}`, `N${i}`]);
  const outcome = await engine.run(workflow(nodes, edges), { nodeName: 'T', items }, ctx);
  const last = `N${steps.length - 1}`;
  return {
    outcome,
    json: jsonOf(outcome.state, last),
    items: outcome.state.runData[last]?.at(-1)?.output[0] ?? [],
  };
}

const toFile = (operation: string, options: Record<string, unknown> = {}): Step => ({
  type: 'n8n-nodes-base.convertToFile',
  typeVersion: 1.1,
  parameters: { operation, options },
});
const fromFile = (operation: string, options: Record<string, unknown> = {}): Step => ({
  type: 'n8n-nodes-base.extractFromFile',
  typeVersion: 1,
  parameters: { operation, options },
});

const rows: Item[] = [
  { json: { name: 'Ada', age: 36, admin: true } },
  { json: { name: 'Bob', age: 41, admin: false } },
];

describe('n8n-nodes-base.convertToFile and extractFromFile', () => {
  it.each(['xlsx', 'ods'])('writes items to %s and reads them back, typed', async (format) => {
    const written = await chain(rows, toFile(format, { sheetName: 'People' }));
    expect(written.items[0]?.binary?.data?.fileName).toBe(`file.${format}`);
    const { outcome, json } = await chain(rows, toFile(format, { sheetName: 'People' }), fromFile(format));
    expect(outcome.status).toBe('success');
    expect(json).toEqual(rows.map((r) => r.json));
  });

  it('reads a range, without a header row, and every value as text', async () => {
    const { json } = await chain(
      rows,
      toFile('xlsx'),
      fromFile('xlsx', { headerRow: false, range: 'A2:B3' }),
    );
    expect(json).toEqual([{ row: ['Ada', 36] }, { row: ['Bob', 41] }]);
    const text = await chain(rows, toFile('xlsx'), fromFile('xlsx', { readAsString: true }));
    expect(text.json[0]).toEqual({ name: 'Ada', age: '36', admin: 'TRUE' });
  });

  it('round-trips CSV with a delimiter and HTML tables', async () => {
    const csv = await chain(rows, toFile('csv', { delimiter: ';' }), fromFile('csv', { delimiter: ';' }));
    expect(csv.json).toEqual([
      { name: 'Ada', age: '36', admin: 'TRUE' },
      { name: 'Bob', age: '41', admin: 'FALSE' },
    ]);
    const html = await chain(rows, toFile('html'), fromFile('html'));
    expect(html.json[1]).toEqual({ name: 'Bob', age: '41', admin: 'FALSE' });
  });

  it('moves JSON and base64 between fields and files', async () => {
    const json = await chain(
      [{ json: { a: { b: [1, 2] } } }],
      {
        type: 'n8n-nodes-base.convertToFile',
        typeVersion: 1.1,
        parameters: { operation: 'toJson', mode: 'each' },
      },
      {
        type: 'n8n-nodes-base.extractFromFile',
        typeVersion: 1,
        parameters: { operation: 'fromJson', destinationKey: 'x.y' },
      },
    );
    expect(json.json).toEqual([{ x: { y: { a: { b: [1, 2] } } } }]);
    const b64 = await chain(
      [{ json: {}, binary: { data: binaryOf(Buffer.from('hi'), 'text/plain', 'a.txt') } }],
      fromFile('binaryToPropery'),
    );
    expect(b64.json).toEqual([{ data: 'aGk=' }]);
  });

  it('refuses a 50 MB spreadsheet before parsing it, with a clear error', async () => {
    const big = binaryOf(
      randomBytes(50 * 1024 * 1024),
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'big.xlsx',
    );
    const started = Date.now();
    const { outcome } = await chain([{ json: {}, binary: { data: big } }], fromFile('xlsx'));
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.message).toBe('The spreadsheet is too large (50 MB; at most 10 MB here)');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('names a file that is not a spreadsheet and a format it does not read', async () => {
    const junk = binaryOf(Buffer.from('not a zip'), 'application/octet-stream', 'x.xlsx');
    const bad = await chain([{ json: {}, binary: { data: junk } }], fromFile('xlsx'));
    expect(bad.outcome.state.error?.message).toBe('The spreadsheet is not a valid zip file');
    const pdf = await chain([{ json: {}, binary: { data: junk } }], fromFile('pdf'));
    expect(pdf.outcome.state.error?.message).toBe('The file is not a PDF');
    const rtf = await chain([{ json: {}, binary: { data: junk } }], fromFile('rtf'));
    expect(rtf.outcome.state.error?.message).toBe(
      "Extracting from 'rtf' files is not available on this platform yet",
    );
  });
});

describe('n8n-nodes-base.spreadsheetFile, moveBinaryData and iCal', () => {
  it('Spreadsheet File writes XLSX and reads it back by its type', async () => {
    const { json } = await chain(
      rows,
      {
        type: 'n8n-nodes-base.spreadsheetFile',
        typeVersion: 2,
        parameters: { operation: 'toFile', fileFormat: 'xlsx' },
      },
      { type: 'n8n-nodes-base.spreadsheetFile', typeVersion: 2, parameters: {} },
    );
    expect(json).toEqual(rows.map((r) => r.json));
    const xls = await chain(rows, {
      type: 'n8n-nodes-base.spreadsheetFile',
      typeVersion: 1,
      parameters: { operation: 'toFile' },
    });
    expect(xls.outcome.state.error?.message).toBe("Writing 'xls' files is not available here");
  });

  it('Move Binary Data turns JSON into a file and back', async () => {
    const { json } = await chain(
      [{ json: { title: 'x', n: 1 } }],
      {
        type: 'n8n-nodes-base.moveBinaryData',
        typeVersion: 1,
        parameters: { mode: 'jsonToBinary', options: {} },
      },
      { type: 'n8n-nodes-base.moveBinaryData', typeVersion: 1, parameters: { options: {} } },
    );
    expect(json).toEqual([{ title: 'x', n: 1 }]);
    const field = await chain(
      [{ json: { title: 'x' } }],
      {
        type: 'n8n-nodes-base.moveBinaryData',
        typeVersion: 1.1,
        parameters: {
          mode: 'jsonToBinary',
          convertAllData: false,
          sourceKey: 'title',
          options: { fileName: 'a.txt', mimeType: 'text/plain' },
        },
      },
      {
        type: 'n8n-nodes-base.moveBinaryData',
        typeVersion: 1.1,
        parameters: { setAllData: false, destinationKey: 'text', options: {} },
      },
    );
    // n8n writes the field as JSON (a string keeps its quotes) unless `useRawData` is on.
    expect(field.json).toEqual([{ text: '"x"' }]);
    const raw = await chain(
      [{ json: { title: 'x', n: 1 } }],
      {
        type: 'n8n-nodes-base.moveBinaryData',
        typeVersion: 1.1,
        parameters: {
          mode: 'jsonToBinary',
          convertAllData: false,
          sourceKey: 'title',
          options: { useRawData: true },
        },
      },
      {
        type: 'n8n-nodes-base.moveBinaryData',
        typeVersion: 1.1,
        parameters: { setAllData: false, destinationKey: 'text', options: { keepSource: true } },
      },
    );
    // Only the converted field leaves the JSON.
    expect(raw.json).toEqual([{ n: 1, text: 'x' }]);
  });

  it('iCalendar writes an all-day event file with its attendees', async () => {
    const { items } = await chain([{ json: {} }], {
      type: 'n8n-nodes-base.iCal',
      typeVersion: 1,
      parameters: {
        title: 'new event',
        start: '2023-02-27T22:00:00.000Z',
        end: '2023-02-27T22:00:00.000Z',
        allDay: true,
        additionalFields: {
          attendeesUi: { attendeeValues: [{ name: 'Person', email: 'person1@email.com' }] },
          calName: 'default',
        },
      },
    });
    const file = items[0]?.binary?.data;
    expect(file?.fileName).toBe('event.ics');
    expect(file?.mimeType).toBe('text/calendar');
    const ics = Buffer.from(file?.data ?? '', 'base64').toString();
    expect(ics).toContain('SUMMARY:new event\r\n');
    expect(ics).toContain('DTSTART;VALUE=DATE:20230227\r\nDTEND;VALUE=DATE:20230228\r\n');
    expect(ics).toContain('ATTENDEE;RSVP=FALSE;CN=Person:MAILTO:person1@email.com');
    expect(ics).toContain('X-WR-CALNAME:default');
  });
});
