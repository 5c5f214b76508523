import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import type { EngineDeps } from '../../src/modules/workflows/engine/types.js';
import { completion, toolCalls } from './support/fake-openai.js';
import { FakeProvider, geminiCalls, geminiText } from './support/fake-provider.js';
import { loadFixture, runFixture } from './support/n8n-fixtures.js';

/**
 * n8n's Azure OpenAI, Mistral Cloud, Groq, OpenRouter and Google Gemini chat models driving an AI Agent
 * with the Calculator tool (test/fixtures/n8n/ai/model-*.json: built in n8n's export shape, a Chat
 * Trigger, an AI Agent v2.2, the model and the tool), each against a local server speaking the
 * provider's wire format: a tool call, then the answer.
 */

const provider = new FakeProvider();
const creds: Record<string, Record<string, string>> = {};
let deps: Partial<EngineDeps>;

beforeAll(async () => {
  await provider.start();
  const base = provider.base;
  Object.assign(creds, {
    azure: { apiKey: 'az-key', resourceName: 'contoso', apiVersion: '2025-03-01-preview', endpoint: base },
    mistral: { apiKey: 'mi-key', url: `${base}/v1` },
    groq: { apiKey: 'gq-key', url: `${base}/openai/v1` },
    gemini: { apiKey: 'gm-key', host: base },
    openrouter: { apiKey: 'or-key', url: `${base}/api/v1` },
  });
  deps = {
    http: createOutboundHttp({ allowHosts: [new URL(base).host], timeoutMs: 10_000 }),
    tenant: 'acct_models',
    credential: async (id) => {
      const found = creds[id];
      if (!found) throw new Error(`Credential '${id}' not found`);
      return found;
    },
  };
});
afterAll(() => provider.stop());
beforeEach(() => provider.reset());

const chat = (chatInput: string) => [{ json: { sessionId: 's-1', action: 'sendMessage', chatInput } }];
const calc = (id: string) =>
  toolCalls([{ id, name: 'calculator', arguments: JSON.stringify({ input: '6*7' }) }]);
type Turn = Record<string, unknown>;
const turns = (i: number) => (provider.requests[i]?.body.messages ?? []) as Turn[];

describe('OpenAI-compatible providers: the tool loop on their endpoints and options', () => {
  it('Azure OpenAI: the deployment path with api-version, the key in api-key, n8n options as body fields', async () => {
    provider.queue(calc('call_a'), completion('6 times 7 is 42.'));
    const { outcome, outputs } = await runFixture(
      loadFixture('ai/model-azure-openai-agent.json'),
      deps,
      chat('6*7?'),
    );
    expect(outcome.state.error).toBeNull();
    expect(outputs['AI Agent']).toEqual([{ output: '6 times 7 is 42.' }]);
    const [first, second] = provider.requests;
    expect(first?.url).toBe(
      '/openai/deployments/gpt-4o-prod/chat/completions?api-version=2025-03-01-preview',
    );
    expect(first?.headers['api-key']).toBe('az-key');
    expect(first?.headers.authorization).toBeUndefined();
    expect(first?.body).toMatchObject({
      model: 'gpt-4o-prod',
      temperature: 0.3,
      max_tokens: 512,
      top_p: 0.9,
    });
    expect(((first?.body.tools ?? []) as Array<{ function: { name: string } }>)[0]?.function.name).toBe(
      'calculator',
    );
    expect(turns(0)[0]).toEqual({
      role: 'system',
      content: 'You are a helpful assistant. Use the calculator for arithmetic.',
    });
    expect(second?.url).toBe(first?.url);
    expect(turns(1).at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_a', content: '42' });
  });

  it('Azure OpenAI without an endpoint: https://{resourceName}.openai.azure.com (refused by the outbound guard here)', async () => {
    creds.azureNoEndpoint = { apiKey: 'k', resourceName: 'contoso', apiVersion: '2025-03-01-preview' };
    const def = loadFixture('ai/model-azure-openai-agent.json');
    const model = def.nodes.find((n) => n.name === 'Azure OpenAI Chat Model');
    if (!model) throw new Error('no model node');
    model.credentials = { azureOpenAiApi: { id: 'azureNoEndpoint', name: 'x' } };
    const { outcome } = await runFixture(def, deps, chat('hi'));
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.message).toMatch(/contoso\.openai\.azure\.com/);
    expect(provider.requests).toHaveLength(0);
  });

  it('Mistral: /v1/chat/completions, bearer key, safe_prompt and random_seed; tool results carry the name', async () => {
    provider.queue(calc('abcdefghi'), completion('42'));
    const { outcome, outputs } = await runFixture(
      loadFixture('ai/model-mistral-cloud-agent.json'),
      deps,
      chat('6*7?'),
    );
    expect(outcome.state.error).toBeNull();
    expect(outputs['AI Agent']).toEqual([{ output: '42' }]);
    const first = provider.requests[0];
    expect(first?.url).toBe('/v1/chat/completions');
    expect(first?.headers.authorization).toBe('Bearer mi-key');
    expect(first?.body).toMatchObject({
      model: 'mistral-large-latest',
      temperature: 0.2,
      max_tokens: 300,
      safe_prompt: true,
      random_seed: 7,
    });
    expect(turns(1).at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'abcdefghi',
      name: 'calculator',
      content: '42',
    });
  });

  it('Groq: /openai/v1/chat/completions, maxTokensToSample as max_tokens', async () => {
    provider.queue(calc('call_g'), completion('It is 42.'));
    const { outcome, outputs } = await runFixture(
      loadFixture('ai/model-groq-agent.json'),
      deps,
      chat('6*7?'),
    );
    expect(outcome.state.error).toBeNull();
    expect(outputs['AI Agent']).toEqual([{ output: 'It is 42.' }]);
    expect(provider.requests[0]?.url).toBe('/openai/v1/chat/completions');
    expect(provider.requests[0]?.headers.authorization).toBe('Bearer gq-key');
    expect(provider.requests[0]?.body).toMatchObject({
      model: 'llama-3.3-70b-versatile',
      max_tokens: 1024,
      temperature: 0.5,
    });
    expect(turns(1).at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_g', content: '42' });
  });

  it("OpenRouter: provider routing as OpenRouter's provider object; empty tool arguments read as {}", async () => {
    provider.queue(
      toolCalls([{ id: 'call_o', name: 'calculator', arguments: '' }]),
      calc('call_o2'),
      completion('42, routed.'),
    );
    const { outcome, outputs } = await runFixture(
      loadFixture('ai/model-openrouter-agent.json'),
      deps,
      chat('6*7?'),
    );
    expect(outcome.state.error).toBeNull();
    expect(outputs['AI Agent']).toEqual([{ output: '42, routed.' }]);
    expect(provider.requests[0]?.url).toBe('/api/v1/chat/completions');
    expect(provider.requests[0]?.body).toMatchObject({
      model: 'anthropic/claude-sonnet-4.5',
      temperature: 0.7,
      max_tokens: 800,
      provider: { order: ['anthropic', 'google'], allow_fallbacks: false, data_collection: 'deny' },
    });
    // The empty-argument call ran with {} and its error went back to the model, which tried again.
    expect(String(turns(1).at(-1)?.content)).toMatch(/input/i);
    expect(turns(2).at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_o2', content: '42' });
  });
});

describe("Google Gemini: Gemini's own generateContent format", () => {
  it('functionCall in, functionResponse out; system as systemInstruction; options as generationConfig', async () => {
    provider.queue(
      geminiCalls([{ name: 'calculator', args: { input: '6*7' } }]),
      geminiText('The answer is 42.'),
    );
    const { outcome, outputs } = await runFixture(
      loadFixture('ai/model-google-gemini-agent.json'),
      deps,
      chat('6*7?'),
    );
    expect(outcome.state.error).toBeNull();
    expect(outputs['AI Agent']).toEqual([{ output: 'The answer is 42.' }]);
    const [first, second] = provider.requests;
    expect(first?.url).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(first?.headers['x-goog-api-key']).toBe('gm-key');
    expect(first?.body).toMatchObject({
      systemInstruction: {
        parts: [{ text: 'You are a helpful assistant. Use the calculator for arithmetic.' }],
      },
      contents: [{ role: 'user', parts: [{ text: '6*7?' }] }],
      generationConfig: { maxOutputTokens: 2048, temperature: 0.4, topK: 32, topP: 1 },
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }],
    });
    const declarations = (
      (first?.body.tools ?? []) as Array<{ functionDeclarations: Array<Record<string, unknown>> }>
    )[0]?.functionDeclarations;
    expect(declarations?.[0]).toMatchObject({
      name: 'calculator',
      parameters: { type: 'object', properties: { input: { type: 'string' } } },
    });
    expect(JSON.stringify(declarations)).not.toContain('additionalProperties');
    expect(second?.body.contents).toEqual([
      { role: 'user', parts: [{ text: '6*7?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'calculator', args: { input: '6*7' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'calculator', response: { result: '42' } } }] },
    ]);
  });

  it('a blocked prompt, an error answer and a body that is not JSON fail the node with a clear message', async () => {
    const def = () => loadFixture('ai/model-google-gemini-agent.json');
    provider.queue({ body: { promptFeedback: { blockReason: 'SAFETY' } } });
    const blocked = await runFixture(def(), deps, chat('x'));
    expect(blocked.outcome.state.error?.message).toBe('Google Gemini blocked the prompt (SAFETY)');
    provider.queue({
      status: 400,
      body: {
        error: {
          code: 400,
          message: 'API key not valid. Please pass a valid API key.',
          status: 'INVALID_ARGUMENT',
        },
      },
    });
    const refused = await runFixture(def(), deps, chat('x'));
    expect(refused.outcome.state.error?.message).toBe(
      'Google Gemini refused the request (400): API key not valid. Please pass a valid API key.',
    );
    provider.queue({ body: '<html>oops' });
    const garbage = await runFixture(def(), deps, chat('x'));
    expect(garbage.outcome.state.error?.message).toContain('Google Gemini');
  });

  it('a model calling tools for ever is stopped by max iterations', async () => {
    const def = loadFixture('ai/model-google-gemini-agent.json');
    const agent = def.nodes.find((n) => n.name === 'AI Agent');
    if (!agent) throw new Error('no agent');
    agent.parameters = { options: { maxIterations: 3 } };
    for (let i = 0; i < 10; i++)
      provider.queue(geminiCalls([{ name: 'calculator', args: { input: '1+1' } }]));
    const started = Date.now();
    const { outcome } = await runFixture(def, deps, chat('loop'));
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.message).toMatch(/max iterations/i);
    expect(provider.requests.length).toBeLessThanOrEqual(4);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('bad settings are clear node errors, before any request', () => {
  it.each([
    [
      'Azure Entra ID',
      'ai/model-azure-openai-agent.json',
      'Azure OpenAI Chat Model',
      { authentication: 'azureEntraCognitiveServicesOAuth2Api', model: 'x', options: {} },
      /Entra ID \(OAuth2\) authentication is not supported/,
    ],
    [
      'a Gemini model name with a path in it',
      'ai/model-google-gemini-agent.json',
      'Google Gemini Chat Model',
      { modelName: 'models/../../v1/files', options: {} },
      /is not a Gemini model name/,
    ],
    [
      'an Azure Extra Body that is not an object',
      'ai/model-azure-openai-agent.json',
      'Azure OpenAI Chat Model',
      { model: 'x', options: { extraBody: '[1]' } },
      /Extra Body option must be a JSON object/,
    ],
  ])('%s', async (_what, file, node, parameters, message) => {
    const def = loadFixture(file);
    const model = def.nodes.find((n) => n.name === node);
    if (!model) throw new Error('no model node');
    model.parameters = parameters;
    const { outcome } = await runFixture(def, deps, chat('hi'));
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.message).toMatch(message);
    expect(provider.requests).toHaveLength(0);
  });
});
