import { NodeRegistry, type NodeType } from '../engine/node-type.js';
import { flowPredictionNode } from './flow-prediction.js';
import { httpRequestNode } from './http-request.js';
import { ifNode } from './if.js';
import { documentLoadNode, knowledgeQueryNode } from './knowledge.js';
import { markdownNode } from './markdown.js';
import { codeNode } from './n8n/code.js';
import { errorTriggerNode } from './n8n/error-trigger.js';
import { n8nDataNodes } from './n8n/group-data.js';
import { n8nHttpNodes } from './n8n/group-http.js';
import { n8nLogicNodes } from './n8n/group-logic.js';
import { manualTriggerNode } from './n8n/manual-trigger.js';
import { n8nRespondToWebhookNode } from './n8n/respond-to-webhook.js';
import { n8nWaitNode } from './n8n/wait.js';
import { n8nWebhookNode } from './n8n/webhook.js';
import { splitItemsNode } from './split-items.js';
import { switchNode } from './switch.js';
import { validateNode } from './validate.js';
import { webhookNode } from './webhook.js';

/** Every node type the platform knows, by type name. */
export const allNodeTypes: NodeType[] = [
  webhookNode,
  httpRequestNode,
  ifNode,
  switchNode,
  splitItemsNode,
  markdownNode,
  validateNode,
  documentLoadNode,
  knowledgeQueryNode,
  flowPredictionNode,
  manualTriggerNode,
  errorTriggerNode,
  n8nWebhookNode,
  n8nRespondToWebhookNode,
  n8nWaitNode,
  codeNode,
  ...n8nLogicNodes,
  ...n8nHttpNodes,
  ...n8nDataNodes,
];

export const defaultNodeRegistry = new NodeRegistry(allNodeTypes);
