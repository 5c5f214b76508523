import type { NodeType } from '../../engine/node-type.js';
import { executeWorkflowNode } from './execute-workflow.js';
import { executeWorkflowTriggerNode } from './execute-workflow-trigger.js';
import { n8nHttpRequestNode } from './http-request.js';
import { scheduleTriggerNode } from './schedule-trigger.js';

/** n8n's node types of this group, in n8n's type names and parameter shapes per typeVersion. */
export const n8nHttpNodes: NodeType[] = [
  n8nHttpRequestNode,
  scheduleTriggerNode,
  executeWorkflowNode,
  executeWorkflowTriggerNode,
];
