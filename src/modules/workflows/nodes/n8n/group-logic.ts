import type { NodeType } from '../../engine/node-type.js';
import { n8nFilterNodes } from './filter/index.js';
import { n8nIfNodes } from './if/index.js';
import { n8nSetV3Nodes } from './set/index.js';
import { n8nSetV1Node } from './set/v1.js';
import { splitInBatchesV3Node } from './split-in-batches/index.js';
import { n8nSwitchNodes } from './switch/index.js';

/** n8n's node types of this group, in n8n's type names and parameter shapes per typeVersion. */
export const n8nLogicNodes: NodeType[] = [
  n8nSetV1Node,
  ...n8nSetV3Nodes,
  ...n8nIfNodes,
  ...n8nFilterNodes,
  ...n8nSwitchNodes,
  splitInBatchesV3Node,
];
