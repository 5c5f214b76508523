import type { N8nExport } from './n8n-fixtures.js';

/**
 * A workflow in n8n's export shape built from a list of nodes and edges: `[from, to]` is a main
 * connection, `[from, to, 'ai_…']` attaches a sub-node. The first node is the Manual Trigger.
 */
export interface AiNodeSpec {
  name: string;
  type: string;
  typeVersion: number;
  parameters?: Record<string, unknown>;
  credentials?: Record<string, { id: string; name: string }>;
}

export const LC = '@n8n/n8n-nodes-langchain';

export function aiWorkflow(nodes: AiNodeSpec[], edges: Array<[string, string, string?]>): N8nExport {
  const all: AiNodeSpec[] = [
    { name: 'Trigger', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
    ...nodes,
  ];
  const connections: Record<
    string,
    Record<string, Array<Array<{ node: string; type: string; index: number }>>>
  > = {};
  for (const [from, to, type = 'main'] of edges) {
    const byType = connections[from] ?? {};
    connections[from] = byType;
    const outputs = byType[type] ?? [[]];
    byType[type] = outputs;
    outputs[0]?.push({ node: to, type, index: 0 });
  }
  return {
    id: `wf_ai_${Math.random().toString(36).slice(2, 8)}`,
    name: 'hand-built AI workflow',
    nodes: all.map((n, i) => ({
      id: `n${i}`,
      position: [i * 200, 0] as [number, number],
      parameters: {},
      ...n,
    })),
    connections,
  } as unknown as N8nExport;
}

export const OPENAI_CRED = { openAiApi: { id: '123', name: 'OpenAI account' } };

export const embeddingsOpenAi = (
  name = 'Embeddings',
  parameters: Record<string, unknown> = {},
): AiNodeSpec => ({
  name,
  type: `${LC}.embeddingsOpenAi`,
  typeVersion: 1.2,
  parameters: { model: 'text-embedding-3-small', options: { dimensions: 64 }, ...parameters },
  credentials: { openAiApi: { id: 'embed', name: 'OpenAI embeddings' } },
});

export const chatModel = (name = 'Model'): AiNodeSpec => ({
  name,
  type: `${LC}.lmChatOpenAi`,
  typeVersion: 1.2,
  parameters: { model: { __rl: true, mode: 'list', value: 'gpt-4o-mini' }, options: {} },
  credentials: OPENAI_CRED,
});
