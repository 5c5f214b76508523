import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import { listAt, toItem, toJson } from './context.js';

const SplitInBatchesV3Parameters = Type.Object(
  {
    /** The editor's notice; n8n exports carry it as ''. */
    splitInBatchesNotice: Type.Optional(Type.String()),
    /** n8n's number field: a fraction takes its whole part (n8n's `splice`). */
    batchSize: Type.Number({ minimum: 1, default: 1 }),
    options: Type.Object(
      {
        /** Treat this run's input as a new set (n8n reads it on every run: an expression may decide). */
        reset: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/**
 * n8n's Loop Over Items (Split in Batches v3). The first run keeps its input in the node's context and
 * sends the first batch out on `loop`; each later run (the loop body's items coming back) adds its input
 * to the processed items and sends the next batch; with none left it sends every processed item out on
 * `done`. As in n8n the context then stays: a later run without `reset` adds its input and is done again
 * at once, so nested loops set `reset` (often to an expression).
 */
export const splitInBatchesV3Node = defineNode({
  type: 'n8n-nodes-base.splitInBatches',
  versions: [3],
  schema: SplitInBatchesV3Parameters,
  outputs: () => 2,
  async execute(ctx) {
    const p = await ctx.params(0);
    const size = Math.floor(p.batchSize);
    const c = ctx.context;
    let batch: Json[];
    if (c.items === undefined || p.options.reset === true) {
      const remaining: Json[] = ctx.items.map(toJson);
      c.currentRunIndex = 0;
      c.maxRunIndex = Math.ceil(remaining.length / size);
      batch = remaining.splice(0, size);
      c.items = remaining;
      c.processedItems = [];
    } else {
      c.currentRunIndex = (typeof c.currentRunIndex === 'number' ? c.currentRunIndex : 0) + 1;
      batch = listAt(c, 'items').splice(0, size);
      // In place: copying the processed list on every round would cost the square of the items.
      const processed = listAt(c, 'processedItems');
      for (const item of ctx.items) processed.push(toJson(item));
    }
    c.noItemsLeft = listAt(c, 'items').length === 0;
    if (batch.length === 0) {
      c.done = true;
      // Outputs `done`, `loop`.
      return output(listAt(c, 'processedItems').map(toItem), []);
    }
    c.done = false;
    return output([], batch.map(toItem));
  },
});
