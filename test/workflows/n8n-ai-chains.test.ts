import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import type { EngineDeps } from '../../src/modules/workflows/engine/types.js';
import { completion, type FakeReply } from './support/fake-openai.js';
import { expectPinnedOutputs, loadFixture, type N8nExport, runFixture } from './support/n8n-fixtures.js';

/**
 * n8n's Information Extractor, Text Classifier, Sentiment Analysis, Auto-fixing Output Parser, Think
 * tool and AI Transform, run from exports in n8n's shape (test/fixtures/n8n/ai/built/, built here: no
 * export of these nodes that runs without outside services was reachable) against a local
 * OpenAI-compatible upstream that records each request and answers from what the request asks, as a
 * model would (items run concurrently in n8n's batches, so answers cannot come from a queue in order).
 */

type Message = { role: string; content: string };
type Answer = (messages: Message[], body: Record<string, unknown>) => FakeReply | string;

class ModelUpstream {
  readonly requests: Array<{ messages: Message[]; body: Record<string, unknown> }> = [];
  answer: Answer = () => ({ status: 501, body: { error: { message: 'no answer set' } } });
  private server: Server | null = null;
  base = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => {
        raw += c;
      });
      req.on('end', () => {
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          // recorded as empty
        }
        const messages = (body.messages ?? []) as Message[];
        this.requests.push({ messages, body });
        const reply = req.url === '/v1/chat/completions' ? this.answer(messages, body) : undefined;
        const r = typeof reply === 'string' ? completion(reply) : reply;
        res
          .writeHead(r?.status ?? (r ? 200 : 404), { 'content-type': 'application/json' })
          .end(JSON.stringify(r?.body ?? { error: { message: 'not found' } }));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

const model = new ModelUpstream();
let deps: Partial<EngineDeps>;

beforeAll(async () => {
  await model.start();
  deps = {
    http: createOutboundHttp({ allowHosts: [new URL(model.base).host], timeoutMs: 10_000 }),
    tenant: 'acct_ai_chains',
    credential: async (id): Promise<Record<string, string>> => {
      if (id === '123') return { apiKey: 'test-api-key', url: `${model.base}/v1` };
      throw new Error(`Credential '${id}' not found`);
    },
  };
});
afterAll(() => model.stop());
beforeEach(() => {
  model.requests.length = 0;
});

const user = (messages: Message[]) => messages.find((m) => m.role === 'user')?.content ?? '';
const system = (messages: Message[]) => messages.find((m) => m.role === 'system')?.content ?? '';
const fenced = (value: unknown) => `\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\``;
/** The JSON schema LangChain's format instructions print, read back from the system message. */
const printedSchema = (messages: Message[]) =>
  JSON.parse(/```json\n(.*)\n```/.exec(system(messages))?.[1] ?? 'null') as Record<string, unknown>;

describe('Information Extractor', () => {
  it('attributes: n8n system prompt, LangChain format instructions, {output} per item', async () => {
    model.answer = (messages) =>
      user(messages).includes('John')
        ? fenced({ name: 'John Smith', age: 34, city: 'Lisbon', mood: 'fine' })
        : fenced({ name: 'Anna', age: 29 });
    const { outcome, outputs } = await runFixture(
      loadFixture('ai/built/information-extractor-attributes.json'),
      deps,
    );
    expect(outcome.state.error).toBeNull();
    // The key the schema does not name is dropped (zod's default), optional ones may be missing.
    expect(outputs['Information Extractor']).toEqual([
      { output: { name: 'John Smith', age: 34, city: 'Lisbon' } },
      { output: { name: 'Anna', age: 29 } },
    ]);
    expect(model.requests).toHaveLength(2);
    const first = model.requests.find((r) => user(r.messages).includes('John'))?.messages ?? [];
    expect(system(first)).toMatch(
      /^You are an expert extraction algorithm\.\nOnly extract relevant information from the text\.\nIf you do not know the value of an attribute asked to extract, you may omit the attribute's value\.\nYou must format your output as a JSON value that adheres to a given "JSON Schema" instance\./,
    );
    expect(printedSchema(first)).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The full name of the customer' },
        age: { type: 'number', description: 'The age of the customer' },
        city: { type: 'string', description: 'Where the customer writes from' },
      },
      required: ['name'],
      additionalProperties: false,
      $schema: 'http://json-schema.org/draft-07/schema#',
    });
    expect(first[1]).toEqual({
      role: 'user',
      content: 'Hi, I am John Smith, 34, writing from Lisbon about order 1182.',
    });
  });

  it('a wrong answer is sent back once with the error (auto-fix), and the repaired one stands', async () => {
    model.answer = (messages) => {
      const text = user(messages);
      if (text.startsWith('Instructions:')) return fenced({ name: 'Anna', age: 29 });
      return text.includes('John') ? fenced({ name: 'John Smith', age: '34' }) : fenced({ name: 'Anna' });
    };
    const { outcome, outputs } = await runFixture(
      loadFixture('ai/built/information-extractor-attributes.json'),
      deps,
    );
    expect(outcome.state.error).toBeNull();
    expect(outputs['Information Extractor']).toEqual([
      { output: { name: 'Anna', age: 29 } },
      { output: { name: 'Anna' } },
    ]);
    const retry = model.requests.find((r) => user(r.messages).startsWith('Instructions:'));
    expect(retry?.messages).toHaveLength(1);
    expect(user(retry?.messages ?? [])).toContain('Completion:\n--------------\n```json');
    expect(user(retry?.messages ?? [])).toContain('/age must be number');
    expect(user(retry?.messages ?? [])).toContain(
      'Please try again. Please only respond with an answer that satisfies the constraints laid out in the Instructions:',
    );
  });

  it('an answer still wrong after the repair fails the node with n8n\'s "Failed to parse" error', async () => {
    model.answer = () => 'I could not find anything.';
    const { outcome } = await runFixture(loadFixture('ai/built/information-extractor-attributes.json'), deps);
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.message).toMatch(
      /^Failed to parse\. Text: "I could not find anything\."\. Error: /,
    );
    expect(model.requests).toHaveLength(4); // two items, each asked and repaired once
  });

  it('a JSON schema (v1, custom system prompt): missing required key is an error, extra keys kept', async () => {
    model.answer = (messages) =>
      user(messages).startsWith('Instructions:')
        ? '{"company":"ACME","date":"2024-05-03","attendees":["Jane","Omar"],"city":"Berlin"}'
        : '{"company":"ACME","date":"2024-05-03"}';
    const { outcome, outputs } = await runFixture(
      loadFixture('ai/built/information-extractor-json-schema.json'),
      deps,
    );
    expect(outcome.state.error).toBeNull();
    expect(outputs['Extract Meeting']).toEqual([
      { output: { company: 'ACME', date: '2024-05-03', attendees: ['Jane', 'Omar'], city: 'Berlin' } },
    ]);
    expect(system(model.requests[0]?.messages ?? [])).toMatch(
      /^You extract meeting details\. Answer in JSON only\.\nYou must format your output/,
    );
    expect(printedSchema(model.requests[0]?.messages ?? [])).toMatchObject({
      required: ['company', 'attendees'],
    });
  });

  it('bad input: no attributes, an invalid schema, an empty text, an upstream error', async () => {
    const def = loadFixture('ai/built/information-extractor-attributes.json');
    const node = def.nodes.find((n) => n.name === 'Information Extractor');
    if (!node) throw new Error('no node');
    node.parameters = { text: '={{ $json.body }}', attributes: { attributes: [] } };
    let run = await runFixture(def, deps);
    expect(run.outcome.state.error?.message).toBe('At least one attribute must be specified');
    node.parameters = { text: 'x', schemaType: 'manual', inputSchema: '{"type": "objekt"}' };
    run = await runFixture(def, deps);
    expect(run.outcome.state.error?.message).toMatch(/^Invalid schema: /);
    node.parameters = { text: '={{ $json.nothing }}', schemaType: 'fromJson', jsonSchemaExample: '{"a":1}' };
    run = await runFixture(def, deps);
    expect(run.outcome.state.error?.message).toBe('Text for item 0 is not defined');
    model.answer = () => ({ status: 429, body: { error: { message: 'Rate limit reached' } } });
    node.parameters = { text: 'x', schemaType: 'fromJson', jsonSchemaExample: '{"a":1}' };
    run = await runFixture(def, deps);
    expect(run.outcome.state.error?.message).toContain('Rate limit reached');
    expect(model.requests.length).toBe(2);
  });
});

describe("Information Extractor: dates, and the Structured Output Parser's own retry prompt", () => {
  it('a date attribute must be a date (YYYY-MM-DD); the repair is asked for it', async () => {
    const def = loadFixture('ai/built/information-extractor-json-schema.json');
    const node = def.nodes.find((n) => n.name === 'Extract Meeting');
    if (!node) throw new Error('no node');
    node.parameters = {
      text: 'We meet on the third of May 2024.',
      attributes: { attributes: [{ name: 'day', type: 'date', description: 'The day', required: true }] },
    };
    model.answer = (messages) =>
      user(messages).startsWith('Instructions:') ? '{"day": "2024-05-03"}' : '{"day": "3 May 2024"}';
    const { outcome, outputs } = await runFixture(def, deps);
    expect(outcome.state.error).toBeNull();
    expect(outputs['Extract Meeting']).toEqual([{ output: { day: '2024-05-03' } }]);
    expect(printedSchema(model.requests[0]?.messages ?? [])).toMatchObject({
      properties: { day: { type: 'string', format: 'date', description: 'The day' } },
    });
    expect(user(model.requests[1]?.messages ?? [])).toContain('must match format "date"');
  });

  it("chainLlm with the Structured Output Parser's customized retry prompt (autoFix)", async () => {
    const def: N8nExport = {
      id: 'wf_retry',
      name: 'retry prompt',
      nodes: [
        {
          id: 't',
          name: 'Trigger',
          type: 'n8n-nodes-base.manualTrigger',
          typeVersion: 1,
          position: [0, 0],
          parameters: {},
        },
        {
          id: 'c',
          name: 'Basic LLM Chain',
          type: '@n8n/n8n-nodes-langchain.chainLlm',
          typeVersion: 1.7,
          position: [200, 0],
          parameters: { promptType: 'define', text: 'Capital of France?', hasOutputParser: true },
        },
        {
          id: 'm',
          name: 'OpenAI Chat Model',
          type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
          typeVersion: 1.2,
          position: [200, 200],
          parameters: { model: { __rl: true, mode: 'list', value: 'gpt-4o-mini' }, options: {} },
          credentials: { openAiApi: { id: '123', name: 'OpenAi account' } },
        },
        {
          id: 'p',
          name: 'Structured Output Parser',
          type: '@n8n/n8n-nodes-langchain.outputParserStructured',
          typeVersion: 1.3,
          position: [400, 200],
          parameters: {
            jsonSchemaExample: '{"city": "Rome"}',
            autoFix: true,
            customizeRetryPrompt: true,
            prompt: 'FIX {completion} BECAUSE {error}',
          },
        },
      ],
      connections: {
        Trigger: { main: [[{ node: 'Basic LLM Chain', type: 'main', index: 0 }]] },
        'OpenAI Chat Model': {
          ai_languageModel: [
            [
              { node: 'Basic LLM Chain', type: 'ai_languageModel', index: 0 },
              { node: 'Structured Output Parser', type: 'ai_languageModel', index: 0 },
            ],
          ],
        },
        'Structured Output Parser': {
          ai_outputParser: [[{ node: 'Basic LLM Chain', type: 'ai_outputParser', index: 0 }]],
        },
      },
    } as unknown as N8nExport;
    model.answer = (messages) => (user(messages).startsWith('FIX') ? '{"city": "Paris"}' : 'Paris');
    const { outcome, outputs } = await runFixture(def, deps);
    expect(outcome.state.error).toBeNull();
    expect(outputs['Basic LLM Chain']).toEqual([{ output: { city: 'Paris' } }]);
    expect(user(model.requests[1]?.messages ?? [])).toMatch(/^FIX Paris BECAUSE /);
  });
});

describe('Text Classifier', () => {
  it('one output per category and "Other"; items unchanged; n8n prompt with the categories', async () => {
    model.answer = (messages) => {
      const text = user(messages);
      if (text.includes('charged')) return fenced({ Billing: true, Technical: false, fallback: false });
      if (text.includes('crashes')) return '{"Billing": false, "Technical": true, "fallback": false}';
      return fenced({ Billing: false, Technical: false, fallback: true });
    };
    const { outcome, outputs } = await runFixture(loadFixture('ai/built/text-classifier-other.json'), deps);
    expect(outcome.state.error).toBeNull();
    expect(outputs['Billing queue']).toEqual([{ ticket: 'I was charged twice this month' }]);
    expect(outputs['Technical queue']).toEqual([{ ticket: 'The app crashes when I open settings' }]);
    expect(outputs['Other queue']).toEqual([{ ticket: 'Do you ship to Iceland?' }]);
    const messages = model.requests[0]?.messages ?? [];
    expect(system(messages)).toMatch(
      /^Please classify the text provided by the user into one of the following categories: Billing, Technical, and use the provided formatting instructions below\. Don't explain, and only output the json\.\n\tYou must format/,
    );
    expect(system(messages)).toContain(
      '\n\tCategories are mutually exclusive, and only one can be true\n\tIf no categories apply, select the "fallback" option.',
    );
    expect(printedSchema(messages)).toMatchObject({
      properties: {
        Billing: {
          type: 'boolean',
          description:
            'Should be true if the input has category "Billing" (description: Payments, invoices and refunds)',
        },
        fallback: { type: 'boolean', description: 'Should be true if none of the other categories apply' },
      },
      required: ['Billing', 'Technical', 'fallback'],
    });
  });

  it("an unparsable answer is repaired when auto-fixing is on; without it, n8n's parse error", async () => {
    model.answer = (messages) =>
      user(messages).startsWith('Instructions:')
        ? '{"Billing": true, "Technical": false, "fallback": false}'
        : 'Billing, clearly.';
    const def = loadFixture('ai/built/text-classifier-other.json');
    const fixed = await runFixture(def, deps);
    expect(fixed.outcome.state.error).toBeNull();
    expect(fixed.outputs['Billing queue']).toHaveLength(3);
    expect(model.requests).toHaveLength(6);

    const classifier = def.nodes.find((n) => n.name === 'Text Classifier');
    if (!classifier) throw new Error('no node');
    (classifier.parameters.options as Record<string, unknown>).enableAutoFixing = false;
    model.requests.length = 0;
    const failed = await runFixture(def, deps);
    expect(failed.outcome.status).toBe('error');
    expect(failed.outcome.state.error?.message).toMatch(/^Failed to parse\. Text: "Billing, clearly\."/);
    expect(model.requests).toHaveLength(3);
  });

  it('continue on fail: the failed item goes to the first output as {error}; no model: a clear error', async () => {
    model.answer = (messages) =>
      user(messages).includes('charged')
        ? 'nope'
        : fenced({ Billing: false, Technical: true, fallback: false });
    const def = loadFixture('ai/built/text-classifier-other.json');
    const classifier = def.nodes.find((n) => n.name === 'Text Classifier');
    if (!classifier) throw new Error('no node');
    classifier.onError = 'continueRegularOutput';
    (classifier.parameters.options as Record<string, unknown>).enableAutoFixing = false;
    const { outcome, outputs } = await runFixture(def, deps);
    expect(outcome.status).toBe('success');
    expect(outputs['Billing queue']?.[0]?.error).toMatch(/^Failed to parse/);
    expect(outputs['Technical queue']).toHaveLength(2);

    const noModel = loadFixture('ai/built/text-classifier-other.json');
    noModel.connections['OpenAI Chat Model'] = {};
    const run = await runFixture(noModel, deps);
    expect(run.outcome.state.error?.message).toBe('A Chat Model sub-node must be connected and enabled');
  });

  it('hostile category names stay data (a `__proto__` category is an ordinary key)', async () => {
    model.answer = () => '{"__proto__": true, "constructor": false}';
    const def = loadFixture('ai/built/text-classifier-other.json');
    const classifier = def.nodes.find((n) => n.name === 'Text Classifier');
    if (!classifier) throw new Error('no node');
    classifier.parameters = {
      inputText: '={{ $json.ticket }}',
      categories: { categories: [{ category: '__proto__' }, { category: 'constructor' }] },
    };
    const { outcome, outputs } = await runFixture(def, deps);
    expect(outcome.state.error).toBeNull();
    expect(outputs['Billing queue']).toHaveLength(3);
    expect(outputs['Technical queue']).toBeUndefined(); // an empty branch runs nothing
    expect(Object.keys(printedSchema(model.requests[0]?.messages ?? []).properties as object)).toEqual([
      '__proto__',
      'constructor',
    ]);
  });
});

describe('Sentiment Analysis', () => {
  it('an output per category, sentimentAnalysis with strength and confidence (includeDetailedResults)', async () => {
    model.answer = (messages) => {
      const text = user(messages);
      const sentiment = text.includes('love') ? 'Positive' : text.includes('fine') ? 'Neutral' : 'Negative';
      return fenced({ sentiment, strength: 0.9, confidence: 0.8 });
    };
    const { outcome, outputs } = await runFixture(
      loadFixture('ai/built/sentiment-analysis-detailed.json'),
      deps,
    );
    expect(outcome.state.error).toBeNull();
    expect(outputs.Positive).toEqual([
      {
        review: 'Absolutely love it, works perfectly.',
        sentimentAnalysis: { category: 'Positive', strength: 0.9, confidence: 0.8 },
      },
    ]);
    expect(outputs.Neutral?.[0]?.sentimentAnalysis).toEqual({
      category: 'Neutral',
      strength: 0.9,
      confidence: 0.8,
    });
    expect(outputs.Negative).toHaveLength(1);
    const messages = model.requests[0]?.messages ?? [];
    expect(system(messages)).toMatch(
      /^You are highly intelligent and accurate sentiment analyzer\. Analyze the sentiment of the provided text\. Categorize it into one of the following: Positive, Neutral, Negative\. Use the provided formatting instructions\. Only output the JSON\.\n\t\t\tYou must format/,
    );
    expect(printedSchema(messages)).toEqual({
      type: 'object',
      properties: {
        sentiment: { type: 'string', enum: ['Positive', 'Neutral', 'Negative'] },
        strength: {
          type: 'number',
          minimum: 0,
          maximum: 1,
          description: 'Strength score for sentiment in relation to the category',
        },
        confidence: { type: 'number', minimum: 0, maximum: 1 },
      },
      required: ['sentiment', 'strength', 'confidence'],
      additionalProperties: false,
      $schema: 'http://json-schema.org/draft-07/schema#',
    });
  });

  it("custom categories without details; an answer outside them fails with n8n's message", async () => {
    const def = loadFixture('ai/built/sentiment-analysis-detailed.json');
    const node = def.nodes.find((n) => n.name === 'Sentiment Analysis');
    if (!node) throw new Error('no node');
    node.parameters = { inputText: '={{ $json.review }}', options: { categories: 'Happy, Sad' } };
    def.connections['Sentiment Analysis'] = {
      main: [[{ node: 'Positive', type: 'main', index: 0 }], [{ node: 'Negative', type: 'main', index: 0 }]],
    };
    model.answer = (messages) =>
      fenced({ sentiment: user(messages).includes('love') ? 'Happy' : 'Sad', strength: 1, confidence: 1 });
    const ok = await runFixture(def, deps);
    expect(ok.outcome.state.error).toBeNull();
    expect(ok.outputs.Positive).toEqual([
      { review: 'Absolutely love it, works perfectly.', sentimentAnalysis: { category: 'Happy' } },
    ]);
    expect(ok.outputs.Negative).toHaveLength(2);
    expect(system(model.requests[0]?.messages ?? [])).toContain('one of the following: Happy, Sad.');

    model.answer = () => fenced({ sentiment: 'Angry', strength: 1, confidence: 1 });
    const bad = await runFixture(def, deps);
    expect(bad.outcome.status).toBe('error');
    expect(bad.outcome.state.error?.message).toBe(
      'Error during parsing of LLM output, please check your LLM model and configuration',
    );
    expect(bad.outcome.state.error?.description).toContain('Failed to parse');
  });

  it('batching: batchSize 1 runs items one after another, batchSize 3 all at once', async () => {
    const def = loadFixture('ai/built/sentiment-analysis-detailed.json');
    const node = def.nodes.find((n) => n.name === 'Sentiment Analysis');
    if (!node) throw new Error('no node');
    let inFlight = 0;
    let most = 0;
    const slow = new ModelUpstream();
    await slow.start();
    try {
      const server = (slow as unknown as { server: Server }).server;
      server.removeAllListeners('request');
      server.on('request', (req, res) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        req.resume();
        req.on('end', () =>
          setTimeout(() => {
            inFlight -= 1;
            res
              .writeHead(200, { 'content-type': 'application/json' })
              .end(
                JSON.stringify(
                  completion(fenced({ sentiment: 'Neutral', strength: 0.5, confidence: 0.5 })).body,
                ),
              );
          }, 50),
        );
      });
      const slowDeps: Partial<EngineDeps> = {
        ...deps,
        http: createOutboundHttp({ allowHosts: [new URL(slow.base).host], timeoutMs: 10_000 }),
        credential: async () => ({ apiKey: 'k', url: `${slow.base}/v1` }),
      };
      for (const [batchSize, expected] of [
        [1, 1],
        [3, 3],
      ] as const) {
        most = 0;
        node.parameters = { inputText: '={{ $json.review }}', options: { batching: { batchSize } } };
        const { outcome, outputs } = await runFixture(def, slowDeps);
        expect(outcome.state.error).toBeNull();
        expect(outputs.Neutral).toHaveLength(3);
        expect(most).toBe(expected);
      }
    } finally {
      await slow.stop();
    }
  });
});

describe('Auto-fixing Output Parser and the Think tool on an agent', () => {
  it('the agent thinks, answers off-format, the parser repairs through its own model', async () => {
    model.answer = (messages, body) => {
      const last = messages.at(-1);
      if (user(messages).startsWith('Instructions:')) return '{"stops": ["Porto", "Madrid"]}';
      if (last?.role === 'tool') return 'Porto then Madrid.';
      return {
        body: {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1700000000,
          model: 'gpt-4o-mini',
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: null,
                tool_calls: [
                  {
                    id: 'call_1',
                    type: 'function',
                    function: {
                      name: 'Think',
                      arguments: JSON.stringify({ input: 'Porto is close; Madrid next.' }),
                    },
                  },
                ],
              },
              finish_reason: 'tool_calls',
            },
          ],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          ...(body.tools ? {} : {}),
        },
      };
    };
    const { outcome, outputs } = await runFixture(loadFixture('ai/built/agent-think-autofixing.json'), deps);
    expect(outcome.state.error).toBeNull();
    expect(outputs['AI Agent']).toEqual([{ output: { stops: ['Porto', 'Madrid'] } }]);
    const tools = (model.requests[0]?.body.tools ?? []) as Array<{ function: Record<string, unknown> }>;
    expect(tools[0]?.function).toEqual({
      name: 'Think',
      description:
        'Use the tool to think about something. It will not obtain new information or change the database, but just append the thought to the log. Use it when complex reasoning or some cache memory is needed.',
      parameters: { type: 'object', properties: { input: { type: 'string' } } },
    });
    expect(model.requests[1]?.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_1',
      content: 'Porto is close; Madrid next.',
    });
    const retry = model.requests.find((r) => user(r.messages).startsWith('Instructions:'));
    expect(user(retry?.messages ?? [])).toContain('Completion:\n--------------\nPorto then Madrid.\n');
  });

  it("a retry prompt without {error} is refused with n8n's message; v1 names the tool thinking_tool", async () => {
    const def = loadFixture('ai/built/agent-think-autofixing.json');
    const fixer = def.nodes.find((n) => n.name === 'Auto-fixing Output Parser');
    const think = def.nodes.find((n) => n.name === 'Think');
    if (!fixer || !think) throw new Error('no node');
    think.typeVersion = 1;
    fixer.parameters = { options: { prompt: 'Fix this: {completion}' } };
    model.answer = () => '{"stops": []}';
    const { outcome } = await runFixture(def, deps);
    expect(outcome.state.error?.message).toBe(
      'Auto-fixing Output Parser: Auto-fixing parser prompt has to contain {error} placeholder',
    );
    fixer.parameters = { options: { prompt: 'Repair {completion} given {error}' } };
    model.answer = (messages) => (user(messages).startsWith('Repair') ? '{"stops": ["Faro"]}' : 'Faro');
    model.requests.length = 0;
    const again = await runFixture(def, deps);
    expect(again.outputs['AI Agent']).toEqual([{ output: { stops: ['Faro'] } }]);
    const names = ((model.requests[0]?.body.tools ?? []) as Array<{ function: { name: string } }>).map(
      (t) => t.function.name,
    );
    expect(names).toContain('thinking_tool');
    expect(user(model.requests.at(-1)?.messages ?? [])).toMatch(/^Repair Faro given /);
  });
});

describe('AI Transform', () => {
  it('runs its stored code over all items in the Code sandbox (pinned output)', async () => {
    await expectPinnedOutputs('ai/built/ai-transform.json', deps);
  });

  it("without code: n8n's messages (generating code is n8n's cloud service); runaway code is stopped", async () => {
    const def: N8nExport = loadFixture('ai/built/ai-transform.json');
    const node = def.nodes.find((n) => n.name === 'AI Transform');
    if (!node) throw new Error('no node');
    node.parameters = { instructions: 'Sort by email' };
    let run = await runFixture(def, deps);
    expect(run.outcome.state.error?.message).toBe('Missing code for data transformation');
    node.parameters = {};
    run = await runFixture(def, deps);
    expect(run.outcome.state.error?.message).toBe('Missing instructions to generate code');
    node.parameters = { jsCode: 'while (true) {}' };
    const started = Date.now();
    run = await runFixture(def, { ...deps, codeTimeoutMs: 300 });
    expect(run.outcome.status).toBe('error');
    expect(Date.now() - started).toBeLessThan(10_000);
    node.onError = 'continueRegularOutput';
    node.parameters = { jsCode: "throw new Error('bad data')" };
    run = await runFixture(def, deps);
    expect(run.outcome.status).toBe('success');
    expect(run.outputs['AI Transform']).toEqual([{ error: expect.stringContaining('bad data') }]);
  });
});
