import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import type { EngineDeps } from '../../src/modules/workflows/engine/types.js';
import { completion, FakeOpenAi } from './support/fake-openai.js';
import { FakeProvider, geminiText } from './support/fake-provider.js';
import { loadFixture, runFixture } from './support/n8n-fixtures.js';

/**
 * Real n8n template exports (test/fixtures/n8n/templates/, SOURCES-templates.md) with the newer AI node
 * types, imported unmodified and run against local upstreams speaking OpenAI's and Gemini's formats.
 */

const openai = new FakeOpenAi();
const gemini = new FakeProvider();
let deps: Partial<EngineDeps>;

beforeAll(async () => {
  await Promise.all([openai.start(), gemini.start()]);
  const hosts = [new URL(openai.base).host, new URL(gemini.base).host];
  deps = {
    http: createOutboundHttp({ allowHosts: hosts, timeoutMs: 10_000 }),
    tenant: 'acct_templates_ai',
    // The templates' credential ids: the OpenAI account and the Gemini (googlePalmApi) one.
    credential: async (id): Promise<Record<string, string>> => {
      if (id === '8gccIjcuf3gvaoEr') return { apiKey: 'oa-key', url: `${openai.base}/v1` };
      if (id === 'clmB8ZYJMHaHmnsu') return { apiKey: 'gm-key', host: gemini.base };
      throw new Error(`Credential '${id}' not found`);
    },
  };
});
afterAll(async () => {
  await openai.stop();
  await gemini.stop();
});
beforeEach(() => {
  openai.reset();
  gemini.reset();
});

describe('n8n templates with the newer AI nodes', () => {
  it('Basic LLM Chain with an Auto-fixing Output Parser: a bad answer is repaired by the parser’s model', async () => {
    const fixed = { state: 'Alaska', cities: [{ name: 'Anchorage', population: 291247 }] };
    openai.queue(completion('Alaska is the largest state.'), completion(JSON.stringify(fixed)));
    const { outcome, outputs } = await runFixture(
      loadFixture('templates/chain-llm-autofixing-parser.json'),
      deps,
    );
    expect(outcome.state.error).toBeNull();
    expect(outputs['Basic LLM Chain']).toEqual([{ output: fixed }]);
    const [ask, repair] = openai.requests.map((r) => JSON.stringify(r.messages));
    expect(ask).toContain('Return the 5 largest states by area');
    expect(repair).toContain(
      'Above, the Completion did not satisfy the constraints given in the Instructions.',
    );
    expect(repair).toContain('Alaska is the largest state.');
  });

  it('AI Agent v1.8 on Google Gemini behind a webhook, with memory per user', async () => {
    const def = loadFixture('templates/agent-gemini-webhook-memory.json');
    const body = (question: string) => [{ json: { body: { userId: 'u-1', userName: 'Ada', question } } }];
    gemini.queue(geminiText('@Ada Hello!'));
    const first = await runFixture(def, deps, body('Hi there?'));
    expect(first.outcome.state.error).toBeNull();
    expect(first.outputs.correctNaming).toEqual([{ answer: '@Ada Hello!' }]);
    expect(gemini.requests[0]?.url).toBe('/v1beta/models/gemini-2.0-flash:generateContent');
    expect(gemini.requests[0]?.headers['x-goog-api-key']).toBe('gm-key');

    gemini.queue(geminiText('@Ada You said hi.'));
    await runFixture(def, deps, body('What did I say?'));
    const contents = gemini.requests[1]?.body.contents as Array<{
      role: string;
      parts: Array<{ text?: string }>;
    }>;
    expect(contents.map((c) => [c.role, c.parts[0]?.text])).toEqual([
      ['user', 'Username: Ada\n\nQuestion/Prompt: Hi there?'],
      ['model', '@Ada Hello!'],
      ['user', 'Username: Ada\n\nQuestion/Prompt: What did I say?'],
    ]);
  });
});
