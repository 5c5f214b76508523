import { Type } from 'typebox';
import { defineNode, type NodeExecutionContext, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { listAt, toItem, toJson } from './context.js';

/** Split In Batches v1 and v2 share their parameters (v2's default batch size is also 10). */
const LegacyParameters = Type.Object(
  {
    splitInBatchesNotice: Type.Optional(Type.String()),
    batchSize: Type.Number({ minimum: 1, default: 10 }),
    options: Type.Object(
      { reset: Type.Optional(Type.Boolean()) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

type Params = { batchSize: number; options: { reset?: boolean } };

/**
 * One run of n8n's Split In Batches v1/v2: the first run (or a reset) keeps its input in the node's
 * context and returns the first batch; each later run returns the next batch. v2 also keeps what the
 * loop body sends back and, with no batch left, returns it all on `done`.
 */
async function nextBatch(
  ctx: NodeExecutionContext<Params>,
  keepProcessed: boolean,
): Promise<{ batch: Item[]; done: Item[] | null }> {
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
    if (keepProcessed) c.processedItems = [];
  } else {
    c.currentRunIndex = (typeof c.currentRunIndex === 'number' ? c.currentRunIndex : 0) + 1;
    batch = listAt(c, 'items').splice(0, size);
    if (keepProcessed) {
      const processed = listAt(c, 'processedItems');
      for (const item of ctx.items) processed.push(toJson(item));
    }
  }
  c.noItemsLeft = listAt(c, 'items').length === 0;
  if (batch.length > 0) {
    if (keepProcessed) c.done = false;
    return { batch: batch.map(toItem), done: null };
  }
  if (keepProcessed) c.done = true;
  return { batch: [], done: keepProcessed ? listAt(c, 'processedItems').map(toItem) : null };
}

/** n8n's Split In Batches v1: one output; with no batch left it outputs nothing and the branch stops. */
export const splitInBatchesV1Node = defineNode({
  type: 'n8n-nodes-base.splitInBatches',
  versions: [1],
  schema: LegacyParameters,
  async execute(ctx) {
    const { batch } = await nextBatch(ctx, false);
    return output(batch);
  },
});

/** n8n's Split In Batches v2: outputs `loop` (the batch) then `done` (every processed item, at the end). */
export const splitInBatchesV2Node = defineNode({
  type: 'n8n-nodes-base.splitInBatches',
  versions: [2],
  schema: LegacyParameters,
  outputs: () => 2,
  async execute(ctx) {
    const { batch, done } = await nextBatch(ctx, true);
    return output(batch, done ?? []);
  },
});
