import type { NodeType } from '../../engine/node-type.js';
import { aggregateNode } from './aggregate.js';
import { limitNode } from './limit.js';
import { mergeV3Node } from './merge.js';
import { mergeV2Node } from './merge-v2.js';
import { n8nNoOpNode } from './no-op.js';
import { removeDuplicatesNode } from './remove-duplicates.js';
import { removeDuplicatesV2Node } from './remove-duplicates-v2.js';
import { sortNode } from './sort.js';
import { splitOutNode } from './split-out.js';
import { stickyNoteNode } from './sticky-note.js';
import { n8nStopAndErrorNode } from './stop-and-error.js';

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
