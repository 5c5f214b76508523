/**
 * Issue 35: a call waiting for approval expires — after the tool's time (`approvalTimeouts`), the
 * agent's (`approvalTimeoutSeconds`) or the server's (AGENT_APPROVAL_TIMEOUT_SECONDS) — and is
 * rejected; a run that then waits for nothing continues in the background (the model reads why).
 * The deadline is on the run's row; the platform's clock is advanced, a worker's sweep finds it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { asSession, memberSession, ownerSession } from '../portal/support.js';
import {
  call,
  chatCalls,
  createAgent,
  expectError,
  expectNamesField,
  textOf,
  toolCallsThenText,
} from './support.js';

const MODEL = 'gpt-4o-mini';

interface Pending {
  id: string;
  name: string;
  expiresAt?: string;
}
interface Run {
  id: string;
  conversationId: string;
  status: string;
  background: boolean;
  messageId: string | null;
  requiredAction: { type: string; toolCalls: Pending[]; approvals: Pending[] } | null;
}

describe.each(await testDialects())('agents: approval timeouts on %s', (dialect) => {
  let bed: LlmTestbed;
  beforeAll(async () => {
    bed = await startLlmTestbed(dialect, {
      AGENT_APPROVAL_SWEEP_MS: '100',
      AGENT_APPROVAL_TIMEOUT_SECONDS: '600',
    });
  });
  afterAll(() => bed?.close());
  beforeEach(() => bed.openai.reset());

  const runOf = async (agentId: string, runId: string): Promise<Run> => {
    const res = await call(bed, 'GET', `/api/agents/${agentId}/runs/${runId}`);
    expect(res.status, res.text).toBe(200);
    return res.json() as Run;
  };
  const paused = async (agentId: string, extra: Record<string, unknown> = {}) => {
    const res = await call(bed, 'POST', `/api/agents/${agentId}/messages`, {
      body: { content: 'Who am I?', ...extra },
    });
    expect(res.status, res.text).toBe(200);
    const answer = res.json() as { runId: string; status: string; requiredAction: Run['requiredAction'] };
    expect(answer.status).toBe('requires_action');
    return answer;
  };

  it('an unanswered approval is rejected after its time; the run continues in the background and completes', async () => {
    const agent = await createAgent(bed, {
      model: MODEL,
      tools: ['user_profile'],
      requiresApproval: ['user_profile'],
      approvalTimeoutSeconds: 60,
    });
    expect(agent).toMatchObject({ approvalTimeoutSeconds: 60, approvalTimeouts: {} });
    toolCallsThenText(bed.openai, { name: 'user_profile', arguments: {} });
    const started = bed.p.clock.now().getTime();
    const answer = await paused(agent.id);
    const approval = answer.requiredAction?.approvals[0] as Pending;
    expect(Date.parse(approval.expiresAt as string) - started).toBeGreaterThanOrEqual(60_000);
    expect(Date.parse(approval.expiresAt as string) - started).toBeLessThan(70_000);

    // Not yet: a sweep before the deadline leaves it waiting.
    bed.p.clock.advance(30);
    await new Promise((r) => setTimeout(r, 300));
    expect((await runOf(agent.id, answer.runId)).status).toBe('requires_action');

    bed.p.clock.advance(31);
    const done = await until(async () => {
      const run = await runOf(agent.id, answer.runId);
      return run.status === 'completed' ? run : undefined;
    }, 'the run completes after its approval expired');
    expect(done.background).toBe(true);
    // The model read the rejection; the tool never ran.
    const second = chatCalls(bed.openai)[1];
    const results = (second?.messages ?? []).filter((m) => m.role === 'tool').map((m) => textOf(m.content));
    expect(results.at(-1)).toContain('rejected by timeout');

    // A decision now is too late.
    expectError(
      await call(bed, 'POST', `/api/agents/${agent.id}/runs/${answer.runId}/approvals`, {
        body: { approvals: [{ toolCallId: approval.id, approve: true }] },
      }),
      409,
      'CONFLICT',
    );
  });

  it('a member’s paused run fails once the member was removed (the tool never ran), and completes while the member stays', async () => {
    const agent = await createAgent(bed, {
      model: MODEL,
      tools: ['user_profile'],
      requiresApproval: ['user_profile'],
      approvalTimeoutSeconds: 60,
    });
    const owner = await ownerSession(bed.p);
    const member = await memberSession(bed.p, owner, `dev-${dialect}@example.com`, 'developer');
    toolCallsThenText(bed.openai, { name: 'user_profile', arguments: {} });
    const res = await asSession(bed.p, member, {
      method: 'POST',
      url: `/api/agents/${agent.id}/messages`,
      payload: { content: 'Who am I?' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json() as { runId: string; status: string };
    expect(answer.status).toBe('requires_action');
    const removed = await asSession(bed.p, owner, {
      method: 'DELETE',
      url: `/v1/members/${member.memberId}`,
    });
    expect(removed.statusCode, removed.body).toBeLessThan(300);

    bed.p.clock.advance(61);
    const failed = await until(async () => {
      const run = await runOf(agent.id, answer.runId);
      return run.status === 'failed' ? run : undefined;
    }, 'the run fails once its approval expired');
    expect(JSON.stringify(failed)).toMatch(/removed/);
    expect(chatCalls(bed.openai)).toHaveLength(1);

    // A member who is still there with the same role: the run continues and completes.
    bed.openai.reset();
    const staying = await memberSession(bed.p, owner, `stays-${dialect}@example.com`, 'developer');
    toolCallsThenText(bed.openai, { name: 'user_profile', arguments: {} });
    const kept = await asSession(bed.p, staying, {
      method: 'POST',
      url: `/api/agents/${agent.id}/messages`,
      payload: { content: 'Who am I?' },
    });
    expect(kept.statusCode, kept.body).toBe(200);
    const keptRun = (kept.json() as { runId: string }).runId;
    bed.p.clock.advance(61);
    await until(async () => {
      const run = await runOf(agent.id, keptRun);
      return run.status === 'completed' ? run : undefined;
    }, 'the staying member’s run completes');
  });

  it('a tool’s own time beats the agent’s; the server default applies without either; a client call still waiting keeps the run paused', async () => {
    const agent = await createAgent(bed, {
      model: MODEL,
      tools: ['user_profile', 'blend_recommendations'],
      requiresApproval: ['user_profile', 'blend_recommendations'],
      approvalTimeouts: { user_profile: 5 },
    });
    toolCallsThenText(bed.openai, [
      { name: 'user_profile', arguments: {} },
      { name: 'blend_recommendations', arguments: {} },
      { name: 'ask_user', arguments: { question: 'Which mood?' } },
    ]);
    const started = bed.p.clock.now().getTime();
    const answer = await paused(agent.id, {
      tools: [{ type: 'function', name: 'ask_user', parameters: { type: 'object' } }],
    });
    const byName = Object.fromEntries((answer.requiredAction?.approvals ?? []).map((a) => [a.name, a]));
    expect(Date.parse(byName.user_profile?.expiresAt as string) - started).toBeLessThan(10_000);
    expect(Date.parse(byName.blend_recommendations?.expiresAt as string) - started).toBeGreaterThanOrEqual(
      600_000,
    );

    bed.p.clock.advance(6);
    const partly = await until(async () => {
      const run = await runOf(agent.id, answer.runId);
      return run.requiredAction?.approvals.length === 1 ? run : undefined;
    }, 'the first approval expires');
    expect(partly.status).toBe('requires_action');
    expect(partly.requiredAction?.approvals.map((a) => a.name)).toEqual(['blend_recommendations']);

    bed.p.clock.advance(600);
    const rest = await until(async () => {
      const run = await runOf(agent.id, answer.runId);
      return run.requiredAction?.approvals.length === 0 ? run : undefined;
    }, 'the second approval expires');
    // The client's call still waits: the run stays paused for it.
    expect(rest).toMatchObject({
      status: 'requires_action',
      requiredAction: { type: 'submit_tool_outputs' },
    });
    const call0 = rest.requiredAction?.toolCalls[0] as Pending;
    const res = await call(bed, 'POST', `/api/agents/${agent.id}/runs/${answer.runId}/tool-outputs`, {
      body: { toolOutputs: [{ toolCallId: call0.id, output: 'calm' }] },
    });
    expect(res.status, res.text).toBe(200);
    expect((res.json() as { status: string }).status).toBe('completed');
  });

  it('refuses a per-tool time for a tool that needs no approval, and a time out of range', async () => {
    expectNamesField(
      await call(bed, 'POST', '/api/agents', {
        body: { name: 'a', model: MODEL, tools: ['user_profile'], approvalTimeouts: { user_profile: 5 } },
      }),
      'approvalTimeouts',
    );
    expectNamesField(
      await call(bed, 'POST', '/api/agents', {
        body: { name: 'a', model: MODEL, approvalTimeoutSeconds: 0 },
      }),
      'approvalTimeoutSeconds',
    );
  });
});
