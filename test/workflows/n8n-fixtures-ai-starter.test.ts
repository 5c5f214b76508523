import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import type { EngineDeps } from '../../src/modules/workflows/engine/types.js';
import { FakeAiUpstream, ollamaText } from './support/fake-ai-upstream.js';
import { loadFixture, runFixture } from './support/n8n-fixtures.js';

/**
 * The demo workflow of n8n's Self-hosted AI Starter Kit (test/fixtures/n8n/ai/starter-kit-demo-workflow.json,
 * source in SOURCES-ai.md): Chat Trigger → Basic LLM Chain v1.7 on the Ollama Chat Model, imported
 * unmodified (its `ollamaApi` credential id as exported) and run against a local Ollama `/api/chat`.
 */
const ollama = new FakeAiUpstream('/api/chat');
let deps: Partial<EngineDeps>;

beforeAll(async () => {
  await ollama.start();
  deps = {
    http: createOutboundHttp({ allowHosts: [new URL(ollama.base).host], timeoutMs: 10_000 }),
    tenant: 'acct_starter_kit',
    credential: async (id): Promise<Record<string, string>> => {
      if (id === 'xHuYe0MDGOs9IpBW') return { baseUrl: ollama.base };
      throw new Error(`Credential '${id}' not found`);
    },
  };
});
afterAll(() => ollama.stop());

describe("n8n's AI Starter Kit demo workflow", () => {
  it('answers the chat input with the Ollama model as {text}', async () => {
    ollama.queue(ollamaText('Hello from llama.'));
    const chat = { sessionId: 's-1', action: 'sendMessage', chatInput: 'Say hello' };
    const { outcome, outputs } = await runFixture(loadFixture('ai/starter-kit-demo-workflow.json'), deps, [
      { json: chat },
    ]);
    expect(outcome.state.error).toBeNull();
    expect(outputs['Chat Trigger']).toEqual([chat]);
    expect(outputs['Basic LLM Chain']).toEqual([{ text: 'Hello from llama.' }]);
    expect(ollama.requests[0]?.body).toMatchObject({
      model: 'llama3.2:latest',
      stream: false,
      messages: [{ role: 'user', content: 'Say hello' }],
    });
  });
});
