import { Value } from 'typebox/value';
import { findJsonProblem } from '../../../core/http/json-guard.js';
import { definitionFromBody } from '../definitions/definitions.js';
import type { ValidationProblem, WorkflowDefinition } from '../engine/index.js';
import { NodeOperationError } from '../engine/node-type.js';
import type { WorkflowEngine } from '../engine/workflow-engine.js';
import {
  isWorkflowJsonExpression,
  MAX_WORKFLOW_JSON_CHARS,
  WORKFLOW_JSON_EXPRESSION,
  workflowJsonSize,
} from '../nodes/n8n/execute-workflow/workflow-ref.js';
import { WorkflowBody, type WorkflowBodyT } from '../schemas.js';

const MAX_LISTED = 20;

/**
 * n8n's `source: 'parameter'` (Execute Workflow, Call n8n Workflow Tool): the callee's workflow JSON,
 * checked as the API checks a saved workflow (the body's shape, JSON limits, every node's type and
 * parameters), its n8n aliases resolved. An export without a name is named, as n8n needs none here.
 */
export function inlineWorkflowDefinition(engine: WorkflowEngine, json: unknown): WorkflowDefinition {
  let body: unknown = json;
  // Refused at save too; a workflow saved before that rule fails here instead of running.
  if (isWorkflowJsonExpression(json))
    throw new NodeOperationError(`The workflow JSON ${WORKFLOW_JSON_EXPRESSION}`);
  // Each execution it starts stores it (trigger data): bounded whether text or object.
  if (workflowJsonSize(json) > MAX_WORKFLOW_JSON_CHARS)
    throw new NodeOperationError(`The workflow JSON is larger than ${MAX_WORKFLOW_JSON_CHARS} characters`, {
      description: 'Save it as a workflow and call that by id',
    });
  if (typeof json === 'string') {
    try {
      body = JSON.parse(json);
    } catch (error) {
      throw new NodeOperationError('The workflow JSON is not valid JSON', {
        description: error instanceof Error ? error.message : String(error),
      });
    }
  }
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new NodeOperationError('The workflow JSON must be an object with nodes and connections');
  const named = { name: 'Workflow given as JSON', connections: {}, ...(body as Record<string, unknown>) };
  const problems: ValidationProblem[] = [];
  const jsonProblem = findJsonProblem(named);
  if (jsonProblem)
    problems.push({
      path: jsonProblem.kind === 'depth' ? 'nodes' : jsonProblem.path,
      message:
        jsonProblem.kind === 'depth'
          ? 'nests too deeply'
          : jsonProblem.kind === 'nul'
            ? 'must not contain the NUL character (U+0000)'
            : 'must be a finite number',
    });
  else if (!Value.Check(WorkflowBody, named))
    for (const e of Value.Errors(WorkflowBody, named))
      problems.push({
        path: e.instancePath.replace(/^\//, '').replaceAll('/', '.') || '(root)',
        message: e.message,
      });
  else {
    const def = definitionFromBody('wf_inline', named as WorkflowBodyT);
    problems.push(...engine.validate(def));
    if (problems.length === 0) return def;
  }
  // Named in the description, not as `problems`: those make a webhook's answer the caller's 400, and
  // here the workflow is at fault, not the call.
  throw new NodeOperationError('The workflow given as JSON is not valid', {
    description: problems
      .slice(0, MAX_LISTED)
      .map((p) => `${p.path}: ${p.message}`)
      .join('; '),
  });
}
