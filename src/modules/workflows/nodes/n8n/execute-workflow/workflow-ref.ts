/** n8n's workflow reference: a plain id, or a resource locator `{__rl, value, mode}` (by id, list or URL). */
export function workflowIdOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return null;
  const { value: id, mode } = value as { value?: unknown; mode?: unknown };
  if (typeof id !== 'string' && typeof id !== 'number') return null;
  const text = String(id);
  if (mode === 'url') return /\/workflow\/([^/?#]+)/.exec(text)?.[1] ?? text;
  return text;
}

/**
 * Most characters of a workflow given as JSON in a node (`source: 'parameter'`): every execution it
 * starts stores it in its trigger data, so it is kept small (a larger one is saved and called by id).
 */
export const MAX_WORKFLOW_JSON_CHARS = 256_000;
/**
 * Most characters of workflow JSON one Execute Workflow run may store across its executions (`each`
 * mode starts one per item, each storing the definition): items × size stays under this.
 */
export const MAX_WORKFLOW_JSON_CHARS_PER_RUN = 16_000_000;

/**
 * Why a workflow given as JSON is never an expression: read from the run's data, a webhook's caller
 * could send any workflow and run it with this account's credentials.
 */
export const WORKFLOW_JSON_EXPRESSION =
  "cannot be an expression: a workflow given as JSON is fixed when saved (from a run's data, whoever sends the data would choose what runs with this account's credentials); save that workflow and call it by id instead";

/** Characters of `workflowJson` as stored (text as is, an object as JSON). */
export function workflowJsonSize(value: unknown): number {
  if (typeof value === 'string') return value.length;
  return JSON.stringify(value ?? null)?.length ?? 0;
}

/** n8n's expression marker on a parameter (`=…`), anywhere it would be evaluated. */
export function isWorkflowJsonExpression(value: unknown): boolean {
  return typeof value === 'string' && value.startsWith('=');
}

/**
 * Save-time problems of n8n's `workflowJson` (`source: 'parameter'`): an expression (refused: see
 * WORKFLOW_JSON_EXPRESSION), or text that can never run (not JSON, no node list, too large). The
 * workflow itself is checked as a saved one when it is called (executions/inline-workflow.ts).
 */
export function workflowJsonProblems(value: unknown): Array<{ path: string; message: string }> {
  const path = 'parameters.workflowJson';
  if (value === undefined) return [{ path, message: "is required with source 'parameter'" }];
  if (isWorkflowJsonExpression(value)) return [{ path, message: WORKFLOW_JSON_EXPRESSION }];
  if (workflowJsonSize(value) > MAX_WORKFLOW_JSON_CHARS)
    return [{ path, message: `must be at most ${MAX_WORKFLOW_JSON_CHARS} characters` }];
  let json = value;
  if (typeof value === 'string') {
    try {
      json = JSON.parse(value);
    } catch {
      return [{ path, message: 'is not valid JSON' }];
    }
  }
  const nodes = (json as { nodes?: unknown } | null)?.nodes;
  return json && typeof json === 'object' && Array.isArray(nodes)
    ? []
    : [{ path, message: 'must be a workflow: an object with a list of nodes' }];
}
