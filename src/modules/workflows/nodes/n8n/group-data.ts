import type { NodeType } from '../../engine/node-type.js';
import { aggregateNode } from './aggregate/index.js';
import { limitNode } from './limit/index.js';
import { mergeV3Node } from './merge/index.js';
import { mergeV2Node } from './merge/v2.js';
import { n8nNoOpNode } from './no-op/index.js';
import { removeDuplicatesNode } from './remove-duplicates/index.js';
import { removeDuplicatesV2Node } from './remove-duplicates/v2.js';
import { sortNode } from './sort/index.js';
import { splitOutNode } from './split-out/index.js';
import { stickyNoteNode } from './sticky-note/index.js';
import { n8nStopAndErrorNode } from './stop-and-error/index.js';

/** n8n's node types of this group, in n8n's type names and parameter shapes per typeVersion. */
export const n8nDataNodes: NodeType[] = [
  mergeV3Node,
  mergeV2Node,
  splitOutNode,
  aggregateNode,
  sortNode,
  limitNode,
  removeDuplicatesNode,
  removeDuplicatesV2Node,
  n8nNoOpNode,
  n8nStopAndErrorNode,
  stickyNoteNode,
];
