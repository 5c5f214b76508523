import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import type { DirectRunner } from '../../src/modules/workflows/executions/direct-run.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { createWorkflow, flow, otherAccountKey, settled, workflowPlatform } from './support.js';

/** webhook → set answering `{text: "got " + question}`; not activated: a direct run does not need it. */
const askFlow = (name: string, webhook: Record<string, unknown> = {}) =>
  flow(name, [
    { name: 'Webhook', type: 'webhook', parameters: { path: name, responseMode: 'lastNode', ...webhook } },
    {
      name: 'Answer',
      type: 'set',
      parameters: { values: { text: '=got {{ $json.body.question }}' }, keepOnlySet: true },
    },
  ]);

/** The AppError a promise rejects with (fails the test if it resolves). */
async function appErrorOf(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe.each(await testDialects())('direct workflow runs on %s', (dialect) => {
  let p: TestPlatform;
  let direct: DirectRunner;
  let slow: Server;
  let slowUrl = '';

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    const api = p.ctx.apis.workflows;
    if (!api) throw new Error('workflows module missing');
    direct = api.direct;
    slow = createServer((_req, res) => {
      setTimeout(() => res.end('{}'), 1_500);
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await p.close();
    slow.closeAllConnections();
    await new Promise((r) => slow.close(r));
  });

  const run = (workflowId: string, body: Record<string, string>, timeoutMs = 5_000) =>
    direct.run({ accountId: p.accountId, workflowId, mode: 'flow', body, timeoutMs });

  it('runs the current version from its webhook and answers the last node; the execution has mode flow', async () => {
    const id = await createWorkflow(p, askFlow('direct-ask'));
    expect(await direct.runnable(p.accountId, id)).toBeNull();
    const { executionId, response } = await run(id, { question: 'tea?' });
    expect(response).toEqual({ kind: 'reply', statusCode: 200, headers: {}, body: { text: 'got tea?' } });
    expect(await settled(p, executionId)).toMatchObject({ status: 'success', mode: 'flow', workflowId: id });
    const list = await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${id}` });
    const entries = (list.json() as { data: Array<{ id: string; mode: string }> }).data;
    expect(entries).toEqual([expect.objectContaining({ id: executionId, mode: 'flow' })]);

    // The current version: a saved change is what the next run uses.
    const changed = askFlow('direct-ask');
    const answer = changed.nodes[1] as { parameters: Record<string, unknown> };
    answer.parameters = { values: { text: '=now {{ $json.body.question }}' }, keepOnlySet: true };
    const put = await p.request({ method: 'PUT', url: `/api/v1/workflows/${id}`, payload: changed });
    expect(put.statusCode, put.body).toBe(200);
    expect((await run(id, { question: 'tea?' })).response).toMatchObject({ body: { text: 'now tea?' } });
  });

  it('an onReceived webhook still answers with the last node output (mode agent too)', async () => {
    const id = await createWorkflow(p, askFlow('direct-received', { responseMode: 'onReceived' }));
    const { executionId, response } = await direct.run({
      accountId: p.accountId,
      workflowId: id,
      mode: 'agent',
      body: { question: 'milk?' },
      timeoutMs: 5_000,
    });
    expect(response).toMatchObject({ kind: 'reply', body: { text: 'got milk?' } });
    expect(await settled(p, executionId)).toMatchObject({ status: 'success', mode: 'agent' });
  });

  it('a failing node answers kind error with the node and its message', async () => {
    const id = await createWorkflow(
      p,
      flow('direct-fail', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'direct-fail', responseMode: 'lastNode' } },
        { name: 'Boom', type: 'stopAndError', parameters: { errorMessage: 'no answer today' } },
      ]),
    );
    const { executionId, response } = await run(id, { question: 'x' });
    expect(response).toMatchObject({
      kind: 'error',
      code: 'UNPROCESSABLE',
      details: { executionId, node: 'Boom', reason: 'no answer today' },
    });
    expect(await settled(p, executionId)).toMatchObject({ status: 'error', mode: 'flow' });
  });

  it("an unknown or another account's workflow is 404; one without a webhook node is 400", async () => {
    const unknown = await appErrorOf(run('wf_nope', { question: 'x' }));
    expect(unknown).toMatchObject({ code: 'WORKFLOW_NOT_FOUND', status: 404 });
    expect(await direct.runnable(p.accountId, 'wf_nope')).toMatch(/not found/);

    const theirs = await createWorkflow(p, askFlow('direct-theirs'), await otherAccountKey(p));
    expect((await appErrorOf(run(theirs, { question: 'x' }))).status).toBe(404);
    expect(await direct.runnable(p.accountId, theirs)).toMatch(/not found/);

    const noHook = await createWorkflow(
      p,
      flow('direct-nohook', [{ name: 'Set', type: 'set', parameters: { values: { a: 1 } } }]),
    );
    expect(await direct.runnable(p.accountId, noHook)).toMatch(/no webhook node/);
    expect(await appErrorOf(run(noHook, { question: 'x' }))).toMatchObject({
      code: 'VALIDATION_ERROR',
      status: 400,
    });
  });

  it('no answer within timeoutMs is a 504 naming the execution, which keeps running', async () => {
    const id = await createWorkflow(
      p,
      flow('direct-slow', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'direct-slow', responseMode: 'lastNode' } },
        { name: 'Slow', type: 'httpRequest', parameters: { method: 'GET', url: `${slowUrl}/slow` } },
      ]),
    );
    const error = await appErrorOf(run(id, { question: 'x' }, 200));
    expect(error).toMatchObject({ code: 'GATEWAY_TIMEOUT', status: 504 });
    const executionId = error.details.executionId as string;
    expect(executionId).toMatch(/^exe_/);
    expect(await settled(p, executionId)).toMatchObject({ status: 'success', mode: 'flow' });
  });
});
