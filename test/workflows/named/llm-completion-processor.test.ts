import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowDefinition } from '../../../src/modules/workflows/engine/types.js';
import { defaultNodeRegistry } from '../../../src/modules/workflows/nodes/index.js';
import { type AllFakes, startAllFakes } from '../support/fakes/index.js';
import {
  answerOf,
  dedupeKeyOf,
  loadWorkflow,
  namedDeps,
  problemPaths,
  runWebhook,
  TOKENS,
  WorkflowEngine,
} from './harness.js';

describe('llm-completion-processor', () => {
  let def: WorkflowDefinition;
  let fakes: AllFakes;
  let engine: WorkflowEngine;
  const base = {
    completionId: 'cmp-1',
    model: 'llama3.1',
    result: 'Intro line\n# Weekly summary\nAll good.',
  };
  const run = (destination: string, over: Record<string, string> = {}) =>
    runWebhook(engine, def, { ...base, ...over, destination });

  beforeAll(async () => {
    def = await loadWorkflow('llm-completion-processor');
    fakes = await startAllFakes(TOKENS);
    engine = new WorkflowEngine(namedDeps(fakes.env), defaultNodeRegistry);
  });
  afterAll(() => fakes.close());

  it('is a valid definition: platform API key, deduped by completionId', async () => {
    expect(engine.validate(def)).toEqual([]);
    expect(def).toMatchObject({ id: 'wf_llm_completion_processor', name: 'llm-completion-processor' });
    const hook = engine.triggerNodes(def)[0];
    expect(hook?.parameters).toMatchObject({
      path: 'llm-completion-processor',
      httpMethod: 'POST',
      authentication: 'apiKey',
    });
    const key = dedupeKeyOf(def);
    expect(await engine.evaluateExpression(def, key, { body: { ...base, destination: 'x' } })).toBe('cmp-1');
  });

  it('docs:<path> publishes the completion as a docs page titled by its first heading', async () => {
    const outcome = await run('docs:/ai/summaries/week-1');
    expect(outcome.status, JSON.stringify(outcome.state.error)).toBe('success');
    expect(answerOf(outcome)).toEqual({
      routed: true,
      completionId: 'cmp-1',
      destination: 'docs:/ai/summaries/week-1',
      target: 'docs',
      path: 'ai/summaries/week-1',
      url: 'https://docs.example.com/ai/summaries/week-1',
    });
    const call = fakes.docs.received.at(-1);
    expect(call).toMatchObject({ method: 'PUT', path: '/api/docs/pages' });
    expect(call?.headers.authorization).toBe('Bearer docs-token');
    expect(call?.body).toEqual({
      path: 'ai/summaries/week-1',
      title: 'Weekly summary',
      markdown: base.result,
      source: { kind: 'llm', model: 'llama3.1', completionId: 'cmp-1' },
    });

    await run('docs:notes/plain', { result: 'No heading here' });
    expect(fakes.docs.received.at(-1)?.body).toMatchObject({ title: 'Completion cmp-1' });
  });

  it('flow:<flowId> asks that flow with the completion as the question', async () => {
    const outcome = await run('flow:review-flow');
    expect(outcome.status, JSON.stringify(outcome.state.error)).toBe('success');
    expect(answerOf(outcome)).toMatchObject({
      routed: true,
      target: 'flow',
      answer: `Answer to: ${base.result}`,
    });
    expect(answerOf(outcome)?.chatId).toEqual(expect.any(String));
    const call = fakes.flow.received.at(-1);
    expect(call).toMatchObject({
      method: 'POST',
      path: '/api/v1/prediction/review-flow',
      body: { question: base.result, overrideConfig: { vars: { completionId: 'cmp-1', model: 'llama3.1' } } },
    });
    expect(call?.headers.authorization).toBe('Bearer flow-token');
  });

  it('llm:<model> sends the completion to that model (Ollama chat) and answers with its reply', async () => {
    const outcome = await run('llm:mistral');
    expect(outcome.status, JSON.stringify(outcome.state.error)).toBe('success');
    expect(answerOf(outcome)).toEqual({
      routed: true,
      completionId: 'cmp-1',
      destination: 'llm:mistral',
      target: 'llm',
      model: 'mistral',
      answer: `Echo: ${base.result}`,
    });
    const call = fakes.llm.received.at(-1);
    expect(call).toMatchObject({
      method: 'POST',
      path: '/api/chat',
      body: { model: 'mistral', messages: [{ role: 'user', content: base.result }], stream: false },
    });
    expect(call?.headers.authorization).toBe('Bearer llm-token');
  });

  it('an http(s) URL gets the completion posted to it, without any platform credential', async () => {
    const destination = `${fakes.callback.url}/hooks/completions?team=7`;
    const outcome = await run(destination);
    expect(outcome.status, JSON.stringify(outcome.state.error)).toBe('success');
    expect(answerOf(outcome)).toEqual({
      routed: true,
      completionId: 'cmp-1',
      destination,
      target: 'callback',
      callbackStatus: 200,
    });
    const call = fakes.callback.received.at(-1);
    expect(call).toMatchObject({
      method: 'POST',
      path: '/hooks/completions',
      query: { team: '7' },
      body: { completionId: 'cmp-1', model: 'llama3.1', result: base.result },
    });
    expect(call?.headers['x-completion-id']).toBe('cmp-1');
    expect(call?.headers.authorization).toBeUndefined();
  });

  it('an unknown or empty destination ends in error at "Unknown destination"', async () => {
    for (const destination of ['ftp://host/x', 'docs:', 'slack:#general']) {
      const outcome = await run(destination);
      expect(outcome.status, destination).toBe('error');
      expect(outcome.state.error?.node).toBe('Unknown destination');
      expect(outcome.state.error?.message).toContain(`Unknown destination '${destination}'`);
    }
  });

  it('an invalid body ends in error listing every bad field', async () => {
    const outcome = await runWebhook(engine, def, { completionId: 1, model: '', destination: ['docs:x'] });
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.node).toBe('Validate');
    expect(problemPaths(outcome)).toEqual([
      'body.completionId',
      'body.destination',
      'body.model',
      'body.result',
    ]);
  });

  it('a failing downstream ends in error naming the node', async () => {
    fakes.llm.failNext('/api/chat', 500);
    const llm = await run('llm:mistral');
    expect(llm.state.error).toMatchObject({ node: 'To model', message: 'Request failed with status 500' });
    fakes.docs.failNext('/api/docs/pages', 500);
    const docs = await run('docs:a');
    expect(docs.state.error).toMatchObject({ node: 'To docs', message: 'Request failed with status 500' });
    fakes.flow.failNext('/api/v1/prediction', 502);
    const flow = await run('flow:f');
    expect(flow.state.error).toMatchObject({ node: 'To flow', message: 'Request failed with status 502' });
    fakes.callback.failNext('/', 500);
    const callback = await run(`${fakes.callback.url}/cb`);
    expect(callback.state.error).toMatchObject({
      node: 'To callback',
      message: 'Request failed with status 500',
    });
  });

  it('a callback to a private address is refused by the outbound guard', async () => {
    const guarded = new WorkflowEngine(
      {
        ...namedDeps(fakes.env),
        http: (await import('../../../src/core/http/outbound.js')).createOutboundHttp({
          allowHosts: [],
          timeoutMs: 2_000,
        }),
      },
      defaultNodeRegistry,
    );
    const outcome = await runWebhook(guarded, def, { ...base, destination: 'http://169.254.169.254/latest' });
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.node).toBe('To callback');
    expect(outcome.state.error?.message).toMatch(/may not reach/);
  });
});
