import type { TestPlatform } from '../helpers/platform.js';
import { createWorkflow, n8nNode } from './support.js';

export type RunData = Record<
  string,
  Array<{ data?: { main: Array<Array<{ json: Record<string, unknown> }>> }; error?: { message: string } }>
>;
export interface Execution {
  id: string;
  status: string;
  data: { resultData: { runData: RunData; error?: { message: string; description?: string } } };
}

/**
 * Runs one n8n node of `type` (behind a Manual Trigger) on `items` through the API's manual run, and
 * answers its output items and the execution's error, if any.
 */
export async function runNode(
  p: TestPlatform,
  node: {
    type: string;
    typeVersion: number;
    parameters: Record<string, unknown>;
    credentials: Record<string, unknown>;
  },
  items: Array<Record<string, unknown>> = [{}],
  settings: Record<string, unknown> = {},
): Promise<{ out: Array<Record<string, unknown>>; error: string | undefined; execution: Execution }> {
  const id = await createWorkflow(p, {
    name: `${node.type} ${Math.random().toString(36).slice(2)}`,
    nodes: [
      n8nNode('Start', 'manualTrigger', 1, {}),
      n8nNode('DB', node.type, node.typeVersion, node.parameters, { credentials: node.credentials }),
    ],
    connections: { Start: { main: [[{ node: 'DB', type: 'main', index: 0 }]] } },
    settings,
  });
  const res = await p.request({
    method: 'POST',
    url: `/api/v1/workflows/${id}/run`,
    payload: { startNode: 'DB', items: items.map((json) => ({ json })) },
  });
  if (res.statusCode !== 200) throw new Error(`run: ${res.statusCode} ${res.body}`);
  const execution = res.json() as Execution;
  const out = (execution.data.resultData.runData.DB?.[0]?.data?.main[0] ?? []).map((i) => i.json);
  return { out, error: execution.data.resultData.error?.message, execution };
}
