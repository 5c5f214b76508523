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
      if (id === 'QRSxlMSE2Tacaxcl') return { apiKey: 'or-key', url: `${gemini.base}/api/v1` };
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

  it('Basic LLM Chain on OpenRouter with a parser, then a Code node that declares its own `items`', async () => {
    const text = [
      'Service: Atlassian',
      'Audience: api.atlassian.com',
      'Authorization URI: https://auth.atlassian.com/authorize',
      'Token URI: https://auth.atlassian.com/oauth/token',
      'Details: Jira resolves to Atlassian',
      'Confidence: 0.9',
    ].join('\n');
    gemini.queue({
      body: {
        id: 'gen-1',
        object: 'chat.completion',
        created: 1,
        model: 'latitudegames/wayfarer-large-70b-llama-3.3',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: JSON.stringify({ action: 'resolve', text }) },
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
      },
    });
    const def = loadFixture('templates/chain-openrouter-parser-code.json');
    const { outcome, outputs } = await runFixture(def, deps, [{ json: { name: 'Jira', audience: '' } }]);
    expect(outcome.state.error).toBeNull();
    expect(gemini.requests[0]?.url).toBe('/api/v1/chat/completions');
    expect(gemini.requests[0]?.body).toMatchObject({ temperature: 0.5, top_p: 0.9, max_tokens: 2500 });
    expect(outputs['Conform JSON']).toEqual([
      {
        output: {
          service_name: 'Atlassian',
          audience: 'api.atlassian.com',
          authorization_uri: 'https://auth.atlassian.com/authorize',
          token_uri: 'https://auth.atlassian.com/oauth/token',
          details: 'Jira resolves to Atlassian',
          confidence: 0.9,
        },
      },
    ]);
  });
});
