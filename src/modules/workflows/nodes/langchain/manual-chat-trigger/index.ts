import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';
import { LANGCHAIN } from '../ai-parts.js';

/**
 * n8n's Manual Chat Trigger (v1, 1.1; replaced by the Chat Trigger): in n8n the editor's chat panel
 * runs the workflow with the message as `{input, sessionId}`. Here a manual run
 * (`POST /api/v1/workflows/{id}/run` with `items`) does the same: the trigger passes the run's items on,
 * one empty item without any (n8n's own emit). Its parameters are editor notices.
 */
export const manualChatTriggerNode = defineNode({
  type: `${LANGCHAIN}.manualChatTrigger`,
  versions: [1, 1.1],
  schema: Type.Object(
    {
      notice: Type.Optional(Type.String({ maxLength: 1_000 })),
      openChat: Type.Optional(Type.String({ maxLength: 1_000 })),
    },
    { additionalProperties: false },
  ),
  trigger: true,
  inputs: 0,
  async execute(ctx) {
    return output(ctx.items.length > 0 ? ctx.items : [{ json: {} }]);
  },
});
