import { defineNode } from '../../../engine/node-type.js';
import { legacySwitchOutputs, legacySwitchParameters, runLegacySwitch } from './legacy-rules.js';

/** n8n's Switch v1: four fixed outputs; each rule names the output its matches go to. */
export const switchV1Node = defineNode({
  type: 'n8n-nodes-base.switch',
  versions: [1],
  schema: legacySwitchParameters(1),
  outputs: (params) => legacySwitchOutputs(1, params),
  execute: (ctx) => runLegacySwitch(1, ctx),
});
