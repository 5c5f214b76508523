import { defineNode } from '../../../engine/node-type.js';
import { legacySwitchOutputs, legacySwitchParameters, runLegacySwitch } from './legacy-rules.js';

/** n8n's Switch v2: one output per rule (first match wins), or `outputsAmount` in expression mode. */
export const switchV2Node = defineNode({
  type: 'n8n-nodes-base.switch',
  versions: [2],
  schema: legacySwitchParameters(2),
  outputs: (params) => legacySwitchOutputs(2, params),
  execute: (ctx) => runLegacySwitch(2, ctx),
});
