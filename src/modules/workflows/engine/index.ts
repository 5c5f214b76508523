/** What the workflow service uses from the engine. */
export { configureExpressionSandbox } from './expression-sandbox.js';
export { isExpression } from './expressions.js';
export type { NodeRegistry } from './node-type.js';
export { configurePythonSandbox } from './python/run-python.js';
export { resumeUrlOf } from './run-expression-data.js';
export type * from './types.js';
export { credentialRefOf } from './types.js';
export {
  RESERVED_RESPONSE_HEADERS,
  trimSlashes,
  type WebhookNodeInfo,
  webhookNodesOf,
} from './webhook-nodes.js';
export { WorkflowEngine } from './workflow-engine.js';
