import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowDefinition } from '../../../src/modules/workflows/engine/types.js';
import { defaultNodeRegistry } from '../../../src/modules/workflows/nodes/index.js';
import { type FakeServer, startFakeFlow } from '../support/fakes/index.js';
import {
  answerOf,
  loadWorkflow,
  namedDeps,
  problemPaths,
  runWebhook,
  TOKENS,
  WorkflowEngine,
} from './harness.js';

describe('flow-builder-flow-trigger', () => {
  let def: WorkflowDefinition;
  let flow: FakeServer;
  let engine: WorkflowEngine;

  beforeAll(async () => {
    def = await loadWorkflow('flow-builder-flow-trigger');
    flow = await startFakeFlow({ token: TOKENS.flow, flows: ['flow-42', 'support bot'] });
    engine = new WorkflowEngine(namedDeps({ FLOW_URL: flow.url }), defaultNodeRegistry);
  });
  afterAll(() => flow.close());

  it('is a valid definition: platform API key', () => {
    expect(engine.validate(def)).toEqual([]);
    expect(def).toMatchObject({ id: 'wf_flow_builder_flow_trigger', name: 'flow-builder-flow-trigger' });
    expect(engine.triggerNodes(def)[0]?.parameters).toMatchObject({
      path: 'flow-builder-flow-trigger',
      httpMethod: 'POST',
      authentication: 'apiKey',
      responseMode: 'lastNode',
    });
  });

  it('asks the flow (Flowise prediction) and answers with its text', async () => {
    const outcome = await runWebhook(engine, def, {
      flowId: 'flow-42',
      input: { question: 'What is new?', context: 'release 2' },
    });
    expect(outcome.status, JSON.stringify(outcome.state.error)).toBe('success');
    expect(answerOf(outcome)).toEqual({
      flowId: 'flow-42',
      answer: 'Answer to: What is new?',
      chatId: '3f1c2d4e-0000-4000-8000-000000000001',
      chatMessageId: '9b8a7c6d-0000-4000-8000-000000000001',
    });
    const call = flow.received.at(-1);
    expect(call).toMatchObject({
      method: 'POST',
      path: '/api/v1/prediction/flow-42',
      body: { question: 'What is new?', overrideConfig: { vars: { context: 'release 2' } } },
    });
    expect(call?.headers.authorization).toBe('Bearer flow-token');
  });

  it('encodes the flow id in the path; context is optional', async () => {
    const outcome = await runWebhook(engine, def, { flowId: 'support bot', input: { question: 'Hi' } });
    expect(outcome.status, JSON.stringify(outcome.state.error)).toBe('success');
    const call = flow.received.at(-1);
    expect(call?.path).toBe('/api/v1/prediction/support%20bot');
    expect(call?.body).toEqual({ question: 'Hi', overrideConfig: { vars: {} } });
  });

  it('an invalid body ends in error listing every bad field', async () => {
    const outcome = await runWebhook(engine, def, { flowId: 3, input: { question: 3, context: {} } });
    expect(outcome.status).toBe('error');
    expect(problemPaths(outcome)).toEqual(['body.flowId', 'body.input.context', 'body.input.question']);
    const noInput = await runWebhook(engine, def, { flowId: 'f', input: 'q' });
    expect(problemPaths(noInput)).toEqual(['body.input', 'body.input.question']);
  });

  it('a failing or unknown flow ends in error naming the node', async () => {
    flow.failNext('/api/v1/prediction', 500);
    const down = await runWebhook(engine, def, { flowId: 'flow-42', input: { question: 'q' } });
    expect(down.state.error).toMatchObject({ node: 'Predict', message: 'Request failed with status 500' });
    const unknown = await runWebhook(engine, def, { flowId: 'nope', input: { question: 'q' } });
    expect(unknown.state.error).toMatchObject({ node: 'Predict', message: 'Request failed with status 404' });
    expect(unknown.state.error?.description).toContain('Chatflow nope not found');
  });
});
