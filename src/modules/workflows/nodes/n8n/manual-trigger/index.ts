import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';

/** n8n's "When clicking 'Test workflow'": starts a manual run with one empty item (or the run's input). */
export const manualTriggerNode = defineNode({
  type: 'n8n-nodes-base.manualTrigger',
  versions: [1],
  schema: Type.Object({}, { additionalProperties: false }),
  trigger: true,
  inputs: 0,
  async execute(ctx) {
    return output(ctx.items.length > 0 ? ctx.items : [{ json: {} }]);
  },
});
