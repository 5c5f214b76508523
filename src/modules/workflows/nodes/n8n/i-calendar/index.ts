import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import { binaryOf } from '../../../engine/binary.js';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { type EventInput, EventParameters, eventFile } from './ics.js';

const ICalParameters = Type.Object(
  {
    operation: Type.Literal('createEventFile', { default: 'createEventFile' }),
    binaryPropertyName: Type.String({ default: 'data' }),
    ...EventParameters,
  },
  { additionalProperties: false },
);

/** n8n's legacy iCalendar node (v1): one `.ics` event file per item, in binary `data`. */
export const n8nICalNode = defineNode({
  type: 'n8n-nodes-base.iCal',
  versions: [1],
  schema: ICalParameters,
  async execute(ctx) {
    const out: Item[] = [];
    for (const [i, item] of ctx.items.entries()) {
      const p = await ctx.params(i);
      const ics = eventFile(p as EventInput, ctx.deps.now(), 'UTC', randomUUID());
      const fileName = String(p.additionalFields.fileName || 'event.ics');
      out.push({
        json: item.json,
        binary: {
          ...(item.binary ?? {}),
          [p.binaryPropertyName]: binaryOf(Buffer.from(ics), 'text/calendar', fileName),
        },
        pairedItem: { item: i },
      });
    }
    return output(out);
  },
});
