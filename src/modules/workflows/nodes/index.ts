import type { NodeRegistry, NodeType } from '../engine/node-type.js';
import { flowPredictionNode } from './flow-prediction.js';
import { httpRequestNode } from './http-request.js';
import { ifNode } from './if.js';
import { documentLoadNode, knowledgeQueryNode } from './knowledge.js';
import { markdownNode } from './markdown.js';
import { mergeNode } from './merge.js';
import { noOpNode } from './no-op.js';
import { respondToWebhookNode } from './respond-to-webhook.js';
import { setNode } from './set.js';
import { splitItemsNode } from './split-items.js';
import { stopAndErrorNode } from './stop-and-error.js';
import { switchNode } from './switch.js';
import { validateNode } from './validate.js';
import { waitNode } from './wait.js';
import { webhookNode } from './webhook.js';

/** Every node type the platform knows, by type name. */
export const allNodeTypes: NodeType[] = [
  webhookNode,
  respondToWebhookNode,
  httpRequestNode,
  setNode,
  ifNode,
  switchNode,
  mergeNode,
  splitItemsNode,
  waitNode,
  noOpNode,
  stopAndErrorNode,
  markdownNode,
  validateNode,
  documentLoadNode,
  knowledgeQueryNode,
  flowPredictionNode,
];

export const defaultNodeRegistry: NodeRegistry = new Map(allNodeTypes.map((n) => [n.type, n]));
