import { expect } from 'vitest';

/** One of n8n's streamed JSON lines. */
export interface Chunk {
  type: string;
  content?: string;
  metadata: { nodeId: string; nodeName: string; itemIndex: number; runIndex: number; timestamp: number };
}

/** Reads a streamed answer line by line; `until` resolves once a chunk matching it has arrived. */
export function reader(res: Response) {
  const chunks: Chunk[] = [];
  const watchers: Array<{ test: (c: Chunk) => boolean; wake: () => void }> = [];
  const body = res.body?.getReader();
  const decoder = new TextDecoder();
  const done = (async () => {
    let buffered = '';
    for (;;) {
      const read = await body?.read();
      if (!read || read.done) break;
      buffered += decoder.decode(read.value, { stream: true });
      let cut = buffered.indexOf('\n');
      for (; cut >= 0; cut = buffered.indexOf('\n')) {
        const chunk = JSON.parse(buffered.slice(0, cut)) as Chunk;
        buffered = buffered.slice(cut + 1);
        chunks.push(chunk);
        for (const w of watchers.filter((x) => x.test(chunk))) w.wake();
      }
    }
    expect(buffered).toBe('');
    return chunks;
  })();
  const until = (test: (c: Chunk) => boolean) =>
    new Promise<void>((wake) => {
      if (chunks.some(test)) wake();
      else watchers.push({ test, wake });
    });
  return { chunks, done, until, cancel: () => body?.cancel() };
}

/** A chat model sub-node in n8n's export shape. */
export interface ModelNode {
  name: string;
  type: string;
  typeVersion: number;
  parameters: Record<string, unknown>;
  credentials: Record<string, { id: string; name: string }>;
}

/**
 * A workflow in n8n's export shape: `trigger` (a streaming Chat Trigger, or the given trigger node) → AI
 * Agent v2.2 with the Calculator tool and the models (the second one the agent's fallback).
 */
export function streamingAgent(
  name: string,
  models: ModelNode[],
  options: {
    webhookId?: string;
    trigger?: Record<string, unknown>;
    agent?: Record<string, unknown>;
  } = {},
) {
  const trigger = options.trigger ?? {
    id: 'chat-node',
    name: 'When chat message received',
    type: '@n8n/n8n-nodes-langchain.chatTrigger',
    typeVersion: 1.1,
    position: [0, 0],
    webhookId: options.webhookId ?? name,
    parameters: { public: true, options: { responseMode: 'streaming' } },
  };
  const triggerName = trigger.name as string;
  return {
    name,
    nodes: [
      trigger,
      {
        id: 'agent-node',
        name: 'AI Agent',
        type: '@n8n/n8n-nodes-langchain.agent',
        typeVersion: 2.2,
        position: [200, 0],
        parameters: { options: {}, ...(models.length > 1 ? { needsFallback: true } : {}), ...options.agent },
      },
      ...models.map((m, i) => ({ id: `model-${i}`, position: [200 + 100 * i, 200], ...m })),
      {
        id: 'calc-node',
        name: 'Calculator',
        type: '@n8n/n8n-nodes-langchain.toolCalculator',
        typeVersion: 1,
        position: [400, 200],
        parameters: {},
      },
    ],
    connections: {
      [triggerName]: { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] },
      ...Object.fromEntries(
        models.map((m, i) => [
          m.name,
          { ai_languageModel: [[{ node: 'AI Agent', type: 'ai_languageModel', index: i }]] },
        ]),
      ),
      Calculator: { ai_tool: [[{ node: 'AI Agent', type: 'ai_tool', index: 0 }]] },
    },
    settings: {},
  };
}
