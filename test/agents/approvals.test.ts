/**
 * Issue 35: human approval of tool calls. A tool the agent lists in `requiresApproval` pauses the run
 * (`requires_action`, `approve_tool_calls`) until a key of the account approves (the server runs the
 * call) or rejects it (the model reads why); mixed with a client tool in one answer, the turn goes on
 * once both are answered. Bad input: unknown calls, other accounts, customer tokens, ended runs.
 * On both databases, against the fake OpenAI upstream.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { otherAccountKey } from '../helpers/accounts.js';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import {
  call,
  chatCalls,
  createAgent,
  customerToken,
  expectError,
  expectNamesField,
  toolCallsThenText,
} from './support.js';

const MODEL = 'gpt-4o-mini';

interface Pending {
  id: string;
  name: string;
  arguments: unknown;
}
interface Answer {
  runId: string;
  conversationId: string;
  status: string;
  messages: Array<{
    role: string;
    content: string;
    steps: Array<{ type: string; name: string; output: unknown }>;
  }>;
  requiredAction?: { type: string; toolCalls: Pending[]; approvals: Pending[] };
}

describe.each(await testDialects())('agents: tool-call approvals on %s', (dialect) => {
  let bed: LlmTestbed;
  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
  });
  afterAll(() => bed?.close());
  beforeEach(() => bed.openai.reset());

  const post = (path: string, body: Record<string, unknown>, key?: string) =>
    call(bed, 'POST', path, { body, ...(key ? { key } : {}) });
  const approvalAgent = () =>
    createAgent(bed, { model: MODEL, tools: ['user_profile'], requiresApproval: ['user_profile'] });
  const pausedTurn = async (agentId: string, extra: Record<string, unknown> = {}) => {
    const res = await post(`/api/agents/${agentId}/messages`, { content: 'Who am I?', ...extra });
    expect(res.status, res.text).toBe(200);
    const answer = res.json() as Answer;
    expect(answer.status).toBe('requires_action');
    return answer;
  };

  it('pauses on a call needing approval; approved, the server runs it and the turn completes', async () => {
    const agent = await approvalAgent();
    expect(agent).toMatchObject({ requiresApproval: ['user_profile'] });
    toolCallsThenText(bed.openai, { name: 'user_profile', arguments: {} });
    const paused = await pausedTurn(agent.id);
    expect(paused.requiredAction).toMatchObject({ type: 'approve_tool_calls', toolCalls: [] });
    const approval = paused.requiredAction?.approvals[0] as Pending;
    expect(approval.name).toBe('user_profile');
    const run = await call(bed, 'GET', `/api/agents/${agent.id}/runs/${paused.runId}`);
    expect(run.json()).toMatchObject({
      status: 'requires_action',
      requiredAction: { approvals: [approval] },
    });

    const res = await post(`/api/agents/${agent.id}/runs/${paused.runId}/approvals`, {
      approvals: [{ toolCallId: approval.id, approve: true }],
    });
    expect(res.status, res.text).toBe(200);
    const done = res.json() as Answer;
    expect(done.status).toBe('completed');
    const steps = done.messages[0]?.steps ?? [];
    expect(steps.map((s) => s.type)).toEqual(['model', 'tool_call', 'model']);
    expect(steps[1]?.name).toBe('user_profile');
    // The model's second call read the tool's result for the approved call.
    const second = chatCalls(bed.openai)[1];
    expect(second?.messages.some((m) => m.role === 'tool' && m.tool_call_id === approval.id)).toBe(true);
    // Decided: a second decision is a 409.
    expectError(
      await post(`/api/agents/${agent.id}/runs/${paused.runId}/approvals`, {
        approvals: [{ toolCallId: approval.id, approve: true }],
      }),
      409,
      'CONFLICT',
    );
  });

  it('rejected, the tool does not run and the model reads the reason', async () => {
    const agent = await approvalAgent();
    toolCallsThenText(bed.openai, { name: 'user_profile', arguments: {} });
    const paused = await pausedTurn(agent.id);
    const approval = paused.requiredAction?.approvals[0] as Pending;
    const res = await post(`/api/agents/${agent.id}/runs/${paused.runId}/approvals`, {
      approvals: [{ toolCallId: approval.id, approve: false, reason: 'no profile reads today' }],
    });
    expect(res.status, res.text).toBe(200);
    expect((res.json() as Answer).status).toBe('completed');
    const tool = chatCalls(bed.openai)[1]?.messages.find((m) => m.role === 'tool');
    expect(String(tool?.content)).toContain('no profile reads today');
  });

  it('a client tool and an approval in one answer: the turn goes on once both are answered', async () => {
    const agent = await approvalAgent();
    toolCallsThenText(bed.openai, [
      { name: 'user_profile', arguments: {} },
      { name: 'lookup', arguments: { id: 3 } },
    ]);
    const paused = await pausedTurn(agent.id, {
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }],
    });
    expect(paused.requiredAction?.type).toBe('submit_tool_outputs');
    const client = paused.requiredAction?.toolCalls[0] as Pending;
    const approval = paused.requiredAction?.approvals[0] as Pending;
    const outputs = await post(`/api/agents/${agent.id}/runs/${paused.runId}/tool-outputs`, {
      toolOutputs: [{ toolCallId: client.id, output: 'order 3: shipped' }],
    });
    expect(outputs.status, outputs.text).toBe(200);
    const waiting = outputs.json() as Answer;
    expect(waiting.status).toBe('requires_action');
    expect(waiting.requiredAction).toMatchObject({
      type: 'approve_tool_calls',
      toolCalls: [],
      approvals: [approval],
    });
    expect(chatCalls(bed.openai)).toHaveLength(1);
    const res = await post(`/api/agents/${agent.id}/runs/${paused.runId}/approvals`, {
      approvals: [{ toolCallId: approval.id, approve: true }],
    });
    expect((res.json() as Answer).status).toBe('completed');
    const tools = chatCalls(bed.openai)[1]?.messages.filter((m) => m.role === 'tool') ?? [];
    expect(tools.map((m) => m.tool_call_id).sort()).toEqual([approval.id, client.id].sort());
  });

  it('refuses bad approvals: unknown call 400, another account 404, a customer token 403, a bad agent 400', async () => {
    const agent = await approvalAgent();
    toolCallsThenText(bed.openai, { name: 'user_profile', arguments: {} });
    const paused = await pausedTurn(agent.id);
    const path = `/api/agents/${agent.id}/runs/${paused.runId}/approvals`;
    const approval = paused.requiredAction?.approvals[0] as Pending;
    expectNamesField(
      await post(path, { approvals: [{ toolCallId: 'call_nope', approve: true }] }),
      'approvals[0]',
    );
    expectNamesField(
      await post(path, {
        approvals: [
          { toolCallId: approval.id, approve: true },
          { toolCallId: approval.id, approve: false },
        ],
      }),
      'approvals[1]',
    );
    expectNamesField(await post(path, { approvals: [] }), 'approvals');
    const other = await otherAccountKey(bed.p);
    expectError(await post(path, { approvals: [{ toolCallId: approval.id, approve: true }] }, other), 404);
    const token = await customerToken(bed, 'cust-approvals');
    expectError(await post(path, { approvals: [{ toolCallId: approval.id, approve: true }] }, token), 403);
    // Still waiting, untouched.
    const run = await call(bed, 'GET', `/api/agents/${agent.id}/runs/${paused.runId}`);
    expect(run.json()).toMatchObject({ status: 'requires_action' });
    expectNamesField(
      await post('/api/agents', {
        name: 'x',
        model: MODEL,
        tools: ['user_profile'],
        requiresApproval: ['knowledge_search'],
      }),
      'requiresApproval[0]',
    );
  });
});
