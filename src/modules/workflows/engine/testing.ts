/** Helpers for the engine's and nodes' tests: a definition builder and plain deps. */
import { resolveAliases } from '../nodes/aliases.js';
import type { EngineDeps, Item, RunContext, WorkflowDefinition, WorkflowNode } from './types.js';

export const fixedNow = new Date('2030-01-02T03:04:05.000Z');

export function testDeps(over: Partial<EngineDeps> = {}): EngineDeps {
  const credentials: Record<string, Record<string, string>> = { cred_1: { token: 's3cret' } };
  return {
    now: () => fixedNow,
    credential: async (id) => {
      const c = credentials[id];
      if (!c) throw new Error(`Credential '${id}' not found`);
      return c;
    },
    http: async () => {
      throw new Error('no outbound HTTP in this test');
    },
    env: { PUBLIC_NAME: 'platform' },
    expressionTimeoutMs: 1_000,
    ...over,
  };
}

export const ctx: RunContext = {
  executionId: 'exec_1',
  mode: 'manual',
  resumeUrlBase: 'https://x.test/webhook-waiting',
};

type NodeSpec = Omit<WorkflowNode, 'id' | 'position' | 'parameters'> & {
  parameters?: Record<string, unknown>;
};

/**
 * Builds a definition from nodes and `[from, to, outputIndex?, inputIndex?]` edges. Short node names
 * are resolved as a definition the service accepts (a saved workflow holds n8n's types).
 */
export function workflow(
  nodes: NodeSpec[],
  edges: Array<[string, string, number?, number?]>,
): WorkflowDefinition {
  const connections: WorkflowDefinition['connections'] = {};
  for (const [from, to, out = 0, input = 0] of edges) {
    const main = connections[from]?.main ?? [];
    connections[from] = { ...connections[from], main };
    while (main.length <= out) main.push([]);
    main[out]?.push({ node: to, type: 'main', index: input });
  }
  return resolveAliases({
    id: 'wf_1',
    name: 'Test',
    nodes: nodes.map((n, i) => ({ id: `n${i}`, position: [i * 200, 0], parameters: {}, ...n })),
    connections,
  });
}

export const trigger = (items: Item[] = [{ json: { body: { name: 'Ada' } } }]) => ({
  nodeName: 'Webhook',
  items,
});

export const webhookNode: NodeSpec = { name: 'Webhook', type: 'webhook', parameters: { path: 'in' } };

/** Output items' json of a node's latest run, output 0. */
export function jsonOf(
  state: { runData: Record<string, Array<{ output: Item[][] }>> },
  name: string,
  out = 0,
) {
  const runs = state.runData[name] ?? [];
  return (runs[runs.length - 1]?.output[out] ?? []).map((i) => i.json);
}
