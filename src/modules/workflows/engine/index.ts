/** What the workflow service uses from the engine. */
export { configureExpressionSandbox } from './expression-sandbox.js';
export { ExpressionError, isExpression } from './expressions.js';
export type { NodeExecutionContext, NodeRegistry, NodeResult, NodeType } from './node-type.js';
export { NodeOperationError } from './node-type.js';
export { resumeUrlOf } from './run-expression-data.js';
export { emptyRunState } from './run-state.js';
export type * from './types.js';
export { credentialRefOf, DEFAULT_MAX_WAIT_MS } from './types.js';
export { validateWorkflow } from './validate.js';
export { trimSlashes, type WebhookNodeInfo, webhookNodesOf } from './webhook-nodes.js';
export { WorkflowEngine } from './workflow-engine.js';
