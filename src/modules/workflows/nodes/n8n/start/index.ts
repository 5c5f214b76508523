import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';

/** n8n's legacy Start node (before Manual Trigger): starts a manual run with one empty item. */
export const startNode = defineNode({
  type: 'n8n-nodes-base.start',
  versions: [1],
  schema: Type.Object({}, { additionalProperties: false }),
  trigger: true,
  inputs: 0,
  async execute(ctx) {
    return output(ctx.items.length > 0 ? ctx.items : [{ json: {} }]);
  },
});
