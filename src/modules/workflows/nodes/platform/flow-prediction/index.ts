import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { PlatformCallFields, platformPost } from '../platform-call.js';

/** The platform's flows (`flow`, Flowise's prediction API), at `FLOW_URL` (platform-call.ts). */
const FLOW = { service: 'flow', label: 'flow service', urlEnv: 'FLOW_URL' } as const;

const FlowPredictionParameters = Type.Object({
  flowId: Type.String({ minLength: 1 }),
  question: Type.String({ minLength: 1 }),
  /** The conversation whose memory the flow uses (`overrideConfig.sessionId`); default the chat id. */
  sessionId: Type.Optional(Type.String({ minLength: 1 })),
  chatId: Type.Optional(Type.String({ minLength: 1 })),
  /** `overrideConfig.vars`: the flow's `{vars.NAME}`; `vars.context` is added to its `{context}`. */
  vars: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  ...PlatformCallFields,
});

/** Asks a flow (`POST /api/v1/prediction/{flowId}`), one prediction per item; the output is its answer. */
export const flowPredictionNode = defineNode({
  type: 'n8n-nodes-platform.flowPrediction',
  schema: FlowPredictionParameters,
  async execute(ctx) {
    const out: Item[] = [];
    const items = ctx.items.length > 0 ? ctx.items : [{ json: {} }];
    for (let i = 0; i < items.length; i++) {
      const p = await ctx.params(i);
      const overrideConfig: Record<string, unknown> = {};
      if (p.sessionId !== undefined) overrideConfig.sessionId = p.sessionId;
      if (p.vars !== undefined) overrideConfig.vars = p.vars;
      const body = {
        question: p.question,
        overrideConfig,
        ...(p.chatId !== undefined ? { chatId: p.chatId } : {}),
      };
      const path = `/api/v1/prediction/${encodeURIComponent(p.flowId)}`;
      const answer = await platformPost(ctx, FLOW, p, path, body);
      if (!answer || typeof answer !== 'object' || Array.isArray(answer)) {
        throw new NodeOperationError('The flow service answered no JSON object', {
          description: JSON.stringify(answer).slice(0, 1000),
        });
      }
      out.push({ json: answer as Record<string, Json> });
    }
    return output(out);
  },
});
