/**
 * Issue 35: background runs (`background: true`): 202 with the queued run at once, a worker runs the
 * turn (its tools too), the caller polls the run; a run is cancelled mid-turn (its model call
 * aborted, no answer stored); bad combinations and other accounts' runs refused. On both databases,
 * against the fake OpenAI upstream. The SIGKILL of the worker is test/faults/agent-run-kill.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { otherAccountKey } from '../helpers/accounts.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { call, chatCalls, createAgent, expectError, expectNamesField, toolCallsThenText } from './support.js';

const MODEL = 'gpt-4o-mini';

interface Run {
  id: string;
  agentId: string;
  conversationId: string;
  status: string;
  background: boolean;
  messageId: string | null;
  error: { code: string; message: string } | null;
  requiredAction: { type: string; toolCalls: Array<{ id: string; name: string }> } | null;
}

describe.each(await testDialects())('agents: background runs on %s', (dialect) => {
  let bed: LlmTestbed;
  beforeAll(async () => {
    bed = await startLlmTestbed(dialect, {}, { timeoutMs: 20_000 });
  });
  afterAll(() => bed?.close());
  beforeEach(() => bed.openai.reset());

  const runOf = async (agentId: string, runId: string, key?: string): Promise<Run> => {
    const res = await call(bed, 'GET', `/api/agents/${agentId}/runs/${runId}`, key ? { key } : {});
    expect(res.status, res.text).toBe(200);
    return res.json() as Run;
  };
  const messagesOf = async (conversationId: string) => {
    const res = await call(bed, 'GET', `/api/conversations/${conversationId}`);
    expect(res.status, res.text).toBe(200);
    type Message = { id: string; role: string; steps: Array<{ type: string }> };
    return (res.json() as { messages: { data: Message[] } }).messages.data;
  };
  const ended = (agentId: string, runId: string, status: string) =>
    until(async () => {
      const run = await runOf(agentId, runId);
      return run.status === status ? run : undefined;
    }, `run ${runId} ${status}`);

  it('answers 202 with the queued run; a worker runs the turn with its tools; the answer is stored', async () => {
    const agent = await createAgent(bed, { model: MODEL, tools: ['user_profile'] });
    toolCallsThenText(bed.openai, { name: 'user_profile', arguments: {} });
    const res = await call(bed, 'POST', `/api/agents/${agent.id}/messages`, {
      body: { content: 'Who am I?', background: true },
    });
    expect(res.status, res.text).toBe(202);
    const queued = res.json() as Run;
    expect(queued).toMatchObject({ agentId: agent.id, status: 'queued', background: true, messageId: null });

    const done = await ended(agent.id, queued.id, 'completed');
    expect(done.messageId).toEqual(expect.any(String));
    const data = await messagesOf(queued.conversationId);
    expect(data.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(data[1]?.id).toBe(done.messageId);
    expect(data[1]?.steps.map((s) => s.type)).toEqual(['model', 'tool_call', 'model']);
    expect(chatCalls(bed.openai)).toHaveLength(2);

    // A second background turn in the same conversation sees the first one as its history.
    const again = await call(bed, 'POST', `/api/agents/${agent.id}/messages`, {
      body: { content: 'And now?', background: true, conversationId: queued.conversationId },
    });
    expect(again.status, again.text).toBe(202);
    await ended(agent.id, (again.json() as Run).id, 'completed');
    const seen = chatCalls(bed.openai)
      .at(-1)
      ?.messages.map((m) => m.role);
    expect(seen?.filter((r) => r === 'user')).toHaveLength(2);
  });

  it('cancels a background run mid-turn: its model call is aborted and no answer is stored', async () => {
    const agent = await createAgent(bed, { model: MODEL });
    bed.openai.delayHeadersMs = 15_000;
    const res = await call(bed, 'POST', `/api/agents/${agent.id}/messages`, {
      body: { content: 'Take your time', background: true },
    });
    expect(res.status, res.text).toBe(202);
    const run = res.json() as Run;
    await until(() => chatCalls(bed.openai).length === 1, 'the model call');
    expect((await runOf(agent.id, run.id)).status).toBe('in_progress');
    const cancel = await call(bed, 'POST', `/api/agents/${agent.id}/runs/${run.id}/cancel`, { body: {} });
    expect(cancel.status, cancel.text).toBe(200);
    expect(cancel.json()).toMatchObject({ status: 'cancelled' });
    await bed.openai.untilAborted(1, 10_000);
    expect((await runOf(agent.id, run.id)).status).toBe('cancelled');
    expect((await messagesOf(run.conversationId)).map((m) => m.role)).toEqual(['user']);
    // Cancelled is final.
    expectError(
      await call(bed, 'POST', `/api/agents/${agent.id}/runs/${run.id}/cancel`, { body: {} }),
      409,
      'CONFLICT',
    );
  });

  it('records a failing model on the run (failed, with its error), never stuck in_progress', async () => {
    const agent = await createAgent(bed, { model: MODEL });
    bed.openai.failNext(400, 5, 'bad request upstream');
    const res = await call(bed, 'POST', `/api/agents/${agent.id}/messages`, {
      body: { content: 'Fail', background: true },
    });
    expect(res.status, res.text).toBe(202);
    const failed = await ended(agent.id, (res.json() as Run).id, 'failed');
    expect(failed.error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
  });

  it('a background run that calls a client tool pauses in requires_action; its outputs continue it', async () => {
    const agent = await createAgent(bed, { model: MODEL });
    toolCallsThenText(bed.openai, { name: 'lookup', arguments: { id: 1 } });
    const res = await call(bed, 'POST', `/api/agents/${agent.id}/messages`, {
      body: {
        content: 'Look it up',
        background: true,
        tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }],
      },
    });
    expect(res.status, res.text).toBe(202);
    const run = res.json() as Run;
    const paused = await ended(agent.id, run.id, 'requires_action');
    const callId = paused.requiredAction?.toolCalls[0]?.id;
    const out = await call(bed, 'POST', `/api/agents/${agent.id}/runs/${run.id}/tool-outputs`, {
      body: { toolOutputs: [{ toolCallId: callId, output: { found: true } }] },
    });
    expect(out.status, out.text).toBe(200);
    expect((await runOf(agent.id, run.id)).status).toBe('completed');
  });

  it('refuses background with stream (400), another account sees no run (404)', async () => {
    const agent = await createAgent(bed, { model: MODEL });
    expectNamesField(
      await call(bed, 'POST', `/api/agents/${agent.id}/messages`, {
        body: { content: 'x', background: true, stream: true },
      }),
      'stream',
    );
    expectNamesField(
      await call(bed, 'POST', `/api/agents/${agent.id}/messages`, {
        body: { content: 'x', background: 'yes' },
      }),
      'background',
    );
    const res = await call(bed, 'POST', `/api/agents/${agent.id}/messages`, {
      body: { content: 'mine', background: true },
    });
    const run = res.json() as Run;
    const other = await otherAccountKey(bed.p);
    const seen = await call(bed, 'GET', `/api/agents/${agent.id}/runs/${run.id}`, { key: other });
    expectError(seen, 404);
    expectError(
      await call(bed, 'POST', `/api/agents/${agent.id}/runs/${run.id}/cancel`, { key: other, body: {} }),
      404,
    );
    await ended(agent.id, run.id, 'completed');
  });
});
