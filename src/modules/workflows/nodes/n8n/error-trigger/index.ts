import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';

/**
 * What a run started by hand sees (n8n's Error Trigger answers a test run with sample data too), so a
 * workflow can be built against the payload's shape before anything fails.
 */
const SAMPLE: Item = {
  json: {
    execution: {
      id: '231',
      url: 'http://localhost:3000/api/v1/executions/231',
      retryOf: '34',
      error: { message: 'Example Error Message' },
      lastNodeExecuted: 'Node With Error',
      mode: 'manual',
    },
    workflow: { id: '1', name: 'Example Workflow' },
  },
};

/** n8n's Error Trigger: starts a workflow named as another's `settings.errorWorkflow` when that one fails. */
export const errorTriggerNode = defineNode({
  type: 'n8n-nodes-base.errorTrigger',
  versions: [1],
  schema: Type.Object({}, { additionalProperties: false }),
  trigger: true,
  inputs: 0,
  async execute(ctx) {
    return output(ctx.items.length > 0 ? ctx.items : [SAMPLE]);
  },
});
