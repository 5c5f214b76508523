import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowDefinition } from '../../../src/modules/workflows/engine/types.js';
import { defaultNodeRegistry } from '../../../src/modules/workflows/nodes/index.js';
import { type FakeServer, startFakeUsers } from '../support/fakes/index.js';
import {
  answerOf,
  dedupeKeyOf,
  loadWorkflow,
  NOW,
  namedDeps,
  problemPaths,
  runWebhook,
  TOKENS,
  WorkflowEngine,
} from './harness.js';

describe('user-registration', () => {
  let def: WorkflowDefinition;
  let users: FakeServer;
  let engine: WorkflowEngine;
  const body = { userId: 'u-1', email: 'ada@example.com', name: 'Ada Lovelace', registrationSource: 'web' };

  beforeAll(async () => {
    def = await loadWorkflow('user-registration');
    users = await startFakeUsers({ token: TOKENS.platform });
    engine = new WorkflowEngine(namedDeps({ USERS_URL: users.url }), defaultNodeRegistry);
  });
  afterAll(() => users.close());

  it('is a valid definition: platform API key, deduped by userId', async () => {
    expect(engine.validate(def)).toEqual([]);
    expect(def).toMatchObject({ id: 'wf_user_registration', name: 'user-registration' });
    const hook = engine.triggerNodes(def)[0];
    expect(hook?.parameters).toMatchObject({
      path: 'user-registration',
      httpMethod: 'POST',
      authentication: 'apiKey',
      responseMode: 'lastNode',
    });
    expect(hook?.parameters.credential).toBeUndefined();
    const key = dedupeKeyOf(def);
    expect(await engine.evaluateExpression(def, key, { body })).toBe('u-1');
  });

  it('starts onboarding at the users service and answers with the profile', async () => {
    const outcome = await runWebhook(engine, def, body);
    expect(outcome.status, JSON.stringify(outcome.state.error)).toBe('success');
    expect(answerOf(outcome)).toEqual({
      onboarded: true,
      userId: 'u-1',
      email: 'ada@example.com',
      profile: {
        id: 'usr_0001',
        userId: 'u-1',
        email: 'ada@example.com',
        name: 'Ada Lovelace',
        status: 'onboarding',
        createdAt: '2030-01-02T03:04:05.000Z',
      },
    });
    const call = users.received.at(-1);
    expect(call).toMatchObject({
      method: 'POST',
      path: '/api/users',
      body: { ...body, onboarding: { status: 'started', startedAt: NOW.toISOString() } },
    });
    expect(call?.headers.authorization).toBe('Bearer PROD_API_for_the_platform');
    expect(call?.headers['idempotency-key']).toBe('user-registration-u-1');
  });

  it('an invalid body ends in error listing every bad field', async () => {
    const outcome = await runWebhook(engine, def, {
      userId: '',
      email: 'not-an-email',
      registrationSource: 7,
    });
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.node).toBe('Validate');
    expect(problemPaths(outcome)).toEqual([
      'body.email',
      'body.name',
      'body.registrationSource',
      'body.userId',
    ]);
    expect(outcome.state.error?.problems).toContainEqual({
      path: 'body.email',
      message: 'must be an email address',
    });
  });

  it('a failing users service ends in error naming the node', async () => {
    users.failNext('/api/users', 500);
    const outcome = await runWebhook(engine, def, body);
    expect(outcome.status).toBe('error');
    expect(outcome.state.error).toMatchObject({
      node: 'Create user',
      message: 'Request failed with status 500',
    });
  });
});
