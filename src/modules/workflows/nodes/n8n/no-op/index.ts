import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';

/** n8n's "No Operation, do nothing": passes its items on unchanged. */
export const n8nNoOpNode = defineNode({
  type: 'n8n-nodes-base.noOp',
  versions: [1],
  schema: Type.Object({}, { additionalProperties: false }),
  async execute(ctx) {
    return output(ctx.items);
  },
});
