import { NodeRegistry, type NodeType } from '../engine/node-type.js';
import { codeNode } from './n8n/code/index.js';
import { errorTriggerNode } from './n8n/error-trigger/index.js';
import { n8nDataNodes } from './n8n/group-data.js';
import { n8nHttpNodes } from './n8n/group-http.js';
import { n8nLogicNodes } from './n8n/group-logic.js';
import { manualTriggerNode } from './n8n/manual-trigger/index.js';
import { n8nRespondToWebhookNode } from './n8n/respond-to-webhook/index.js';
import { n8nWaitNode } from './n8n/wait/index.js';
import { n8nWebhookNode } from './n8n/webhook/index.js';
import { flowPredictionNode } from './platform/flow-prediction/index.js';
import { httpRequestNode } from './platform/http-request/index.js';
import { ifNode } from './platform/if/index.js';
import { documentLoadNode, knowledgeQueryNode } from './platform/knowledge/index.js';
import { markdownNode } from './platform/markdown/index.js';
import { splitItemsNode } from './platform/split-items/index.js';
import { switchNode } from './platform/switch/index.js';
import { validateNode } from './platform/validate/index.js';
import { webhookNode } from './platform/webhook/index.js';

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
