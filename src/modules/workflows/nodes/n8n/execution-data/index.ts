import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';

/** n8n's bounds on custom execution data: keys and values are cut, at most 10 keys are kept. */
const MAX_KEYS = 10;
const MAX_KEY = 50;
const MAX_VALUE = 512;

const Pair = Type.Object(
  { key: Type.String({ default: '' }), value: Type.String({ default: '' }) },
  { additionalProperties: false },
);

const ExecutionDataParameters = Type.Object(
  {
    notice: Type.Optional(Type.String()),
    operation: Type.Literal('save', { default: 'save' }),
    dataToSave: Type.Object(
      { values: Type.Optional(Type.Array(Pair)) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/**
 * n8n's Execution Data (v1, v1.1): saves key/value pairs for finding the execution later and passes
 * its items through unchanged. The platform has no execution search by custom data yet: the pairs are
 * checked (n8n's bounds) and kept in the node's context of this run, the items pass through.
 */
export const executionDataNode = defineNode({
  type: 'n8n-nodes-base.executionData',
  versions: [1, 1.1],
  schema: ExecutionDataParameters,
  async execute(ctx) {
    const saved: Record<string, string> = {};
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      for (const { key, value } of p.dataToSave.values ?? []) {
        if (key === '') continue;
        saved[key.slice(0, MAX_KEY)] = value.slice(0, MAX_VALUE);
      }
    }
    if (Object.keys(saved).length > MAX_KEYS)
      throw new NodeOperationError(`At most ${MAX_KEYS} keys of execution data can be saved`, {
        description: `This run tried to save ${Object.keys(saved).length}`,
      });
    ctx.context.customData = saved;
    return output(ctx.items);
  },
});
