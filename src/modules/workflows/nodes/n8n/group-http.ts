import type { NodeType } from '../../engine/node-type.js';
import { executeWorkflowNode } from './execute-workflow/index.js';
import { executeWorkflowTriggerNode } from './execute-workflow-trigger/index.js';
import { n8nHttpRequestNode } from './http-request/index.js';
import { scheduleTriggerNode } from './schedule-trigger/index.js';

/** n8n's node types of this group, in n8n's type names and parameter shapes per typeVersion. */
export const n8nHttpNodes: NodeType[] = [
  n8nHttpRequestNode,
  scheduleTriggerNode,
  executeWorkflowNode,
  executeWorkflowTriggerNode,
];
