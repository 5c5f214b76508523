import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Item } from '../../src/modules/workflows/engine/index.js';
import { workflow } from '../../src/modules/workflows/engine/testing.js';
import { defaultNodeRegistry } from '../../src/modules/workflows/nodes/index.js';
import { namedDeps, runContext, TOKENS, WorkflowEngine } from './named/harness.js';
import { type FakeServer, startFakeFlow } from './support/fakes/index.js';

/** The `flowPrediction` node against a fake Flowise prediction API, run by the engine from a webhook. */
describe('flowPrediction node', () => {
  let fake: FakeServer;
  let engine: WorkflowEngine;

  beforeAll(async () => {
    fake = await startFakeFlow({
      token: TOKENS.flow,
      flows: ['flow-42', 'support bot'],
      answer: (q, flowId) => `${flowId} says: ${q}`,
    });
    engine = new WorkflowEngine(namedDeps({ FLOW_URL: fake.url }), defaultNodeRegistry);
  });
  afterAll(() => fake.close());

  /** webhook → Ask (flowPrediction with `parameters`), fed `bodies` as webhook items. */
  const run = (
    parameters: Record<string, unknown>,
    bodies: Array<Record<string, unknown>>,
    using = engine,
  ) => {
    const def = workflow(
      [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'ask' } },
        { name: 'Ask', type: 'flowPrediction', parameters: { credential: 'flow-api-key', ...parameters } },
      ],
      [['Webhook', 'Ask']],
    );
    const items = bodies.map((body) => ({ json: { headers: {}, params: {}, query: {}, body } }) as Item);
    return using.run(def, { nodeName: 'Webhook', items }, runContext);
  };

  it('asks the flow once per item with the key, session, chat and vars; the output is its answer', async () => {
    const before = fake.received.length;
    const outcome = await run(
      {
        flowId: '={{ $json.body.flow }}',
        question: '={{ $json.body.q }}',
        sessionId: '={{ "user-" + $json.body.user }}',
        chatId: 'chat-1',
        vars: { context: '={{ $json.body.context }}', tone: 'dry' },
      },
      [
        { flow: 'flow-42', q: 'What is new?', user: 7, context: 'release 2' },
        { flow: 'support bot', q: 'Hi', user: 8, context: 'none' },
      ],
    );
    expect(outcome.status, JSON.stringify(outcome.state.error)).toBe('success');
    const calls = fake.received.slice(before);
    expect(calls.map((c) => [c.method, c.path])).toEqual([
      ['POST', '/api/v1/prediction/flow-42'],
      ['POST', '/api/v1/prediction/support%20bot'],
    ]);
    expect(calls.map((c) => c.headers.authorization)).toEqual(['Bearer flow-token', 'Bearer flow-token']);
    expect(calls[0]?.body).toEqual({
      question: 'What is new?',
      overrideConfig: { sessionId: 'user-7', vars: { context: 'release 2', tone: 'dry' } },
      chatId: 'chat-1',
    });
    expect(calls[1]?.body).toMatchObject({ question: 'Hi', overrideConfig: { sessionId: 'user-8' } });
    const out = outcome.lastItems.map((i) => i.json);
    expect(out).toHaveLength(2);
    expect(out[0]).toEqual({
      text: 'flow-42 says: What is new?',
      question: 'What is new?',
      chatId: expect.any(String),
      chatMessageId: expect.any(String),
      sessionId: expect.any(String),
      memoryType: 'Buffer Memory',
    });
    expect(out[1]).toMatchObject({ text: 'support bot says: Hi' });
  });

  it('sends only the question and an empty overrideConfig when nothing else is set', async () => {
    const outcome = await run({ flowId: 'flow-42', question: 'Plain?' }, [{}]);
    expect(outcome.status, JSON.stringify(outcome.state.error)).toBe('success');
    expect(fake.received.at(-1)?.body).toEqual({ question: 'Plain?', overrideConfig: {} });
  });

  it("a 4xx from the flow service fails the node with the service's message", async () => {
    const unknown = await run({ flowId: 'nope', question: 'x' }, [{}]);
    expect(unknown.status).toBe('error');
    expect(unknown.state.error).toMatchObject({
      node: 'Ask',
      message: 'The flow service refused: Chatflow nope not found',
    });

    const wrongKey = new WorkflowEngine(
      {
        ...namedDeps({ FLOW_URL: fake.url }),
        credential: async () => ({ token: 'not-the-key' }),
      },
      defaultNodeRegistry,
    );
    const denied = await run({ flowId: 'flow-42', question: 'x' }, [{}], wrongKey);
    expect(denied.state.error).toMatchObject({
      node: 'Ask',
      message: 'The flow service refused: Unauthorized Access',
    });
  });

  it('baseUrl overrides FLOW_URL; with neither the node says what to set', async () => {
    const noUrl = new WorkflowEngine(namedDeps({}), defaultNodeRegistry);
    const missing = await run({ flowId: 'flow-42', question: 'x' }, [{}], noUrl);
    expect(missing.state.error?.message).toBe('No flow service: set FLOW_URL or the baseUrl parameter');

    const before = fake.received.length;
    const given = await run({ flowId: 'flow-42', question: 'x', baseUrl: `${fake.url}/` }, [{}], noUrl);
    expect(given.status, JSON.stringify(given.state.error)).toBe('success');
    expect(fake.received.slice(before).map((c) => c.path)).toEqual(['/api/v1/prediction/flow-42']);
  });
});
