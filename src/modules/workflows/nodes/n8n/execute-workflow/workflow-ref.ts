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

/** Most characters of a workflow given as JSON in a node (`source: 'parameter'`). */
const MAX_WORKFLOW_JSON_CHARS = 1_000_000;

/**
 * Save-time problems of n8n's `workflowJson` (`source: 'parameter'`): text that can never run (not
 * JSON, no node list, too large). The workflow itself is checked as a saved one when it is called
 * (executions/inline-workflow.ts); an expression is read only then.
 */
export function workflowJsonProblems(value: unknown): Array<{ path: string; message: string }> {
  const path = 'parameters.workflowJson';
  if (value === undefined) return [{ path, message: "is required with source 'parameter'" }];
  if (typeof value === 'string' && value.startsWith('=')) return [];
  let json = value;
  if (typeof value === 'string') {
    if (value.length > MAX_WORKFLOW_JSON_CHARS)
      return [{ path, message: `must be at most ${MAX_WORKFLOW_JSON_CHARS} characters` }];
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
