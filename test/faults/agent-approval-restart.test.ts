import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/modules/auth/key-format.js';
import { chatCalls, textOf, toolCallsThenText } from '../agents/support.js';
import { PG_URL, testDialects, uniqueName } from '../helpers/services.js';
import { stop } from '../scale/support.js';
import { type FakeLlmServer, startFakeOpenAi } from '../support/fake-llm/index.js';
import {
  apiClient,
  baseEnv,
  cleanup,
  eventually,
  type PlatformProcess,
  startServer,
  tempDir,
} from '../workflows/process/processes.js';

/**
 * Issue 35: an approval deadline outlives the process that set it. A run pauses for approval; the
 * server is SIGKILLed before the deadline (its own sweep is an hour apart, so it cannot reject it);
 * a new server on the same database finds the expired approval, rejects it by timeout, and the run
 * completes with the model reading the rejection, the tool never run. On a SQLite file and on
 * PostgreSQL (a schema of its own).
 */

let fake: FakeLlmServer | undefined;
const schemas: string[] = [];

async function pgQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  await cleanup();
  await fake?.close();
  for (const schema of schemas) await pgQuery(`drop schema if exists "${schema}" cascade`);
});

async function databaseEnv(dialect: string): Promise<Record<string, string>> {
  const dataDir = tempDir();
  if (dialect === 'sqlite') return baseEnv(dataDir);
  const schema = uniqueName('approval_restart');
  schemas.push(schema);
  await pgQuery(`create schema "${schema}"`);
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { ...baseEnv(dataDir), DATA_DIR: path.join(dataDir, 'unused'), DATABASE_URL: url.toString() };
}

describe.each(await testDialects())('an approval deadline across a SIGKILL on %s', (dialect) => {
  it('is swept by the next process: rejected by timeout, the run completes, the tool never ran', async () => {
    fake ??= await startFakeOpenAi();
    const llm = fake;
    llm.reset();
    const key = generateKey('production');
    const env = {
      ...(await databaseEnv(dialect)),
      PLATFORM_BOOTSTRAP_KEY: key,
      LLM_MODELS: JSON.stringify([
        { name: 'gpt-4o-mini', provider: 'openai', baseUrl: llm.url, timeoutMs: 120_000 },
      ]),
    };
    // The first server sweeps once at start, then not for an hour: only the restart can expire it.
    let server: PlatformProcess & { url: string } = await startServer(['serve'], {
      ...env,
      AGENT_APPROVAL_SWEEP_MS: '3600000',
    });
    let api = apiClient(server.url, key);
    const agent = await api('POST', '/api/agents', {
      name: 'approver',
      model: 'gpt-4o-mini',
      tools: ['user_profile'],
      requiresApproval: ['user_profile'],
      approvalTimeoutSeconds: 1,
    });
    expect(agent.status, JSON.stringify(agent.json)).toBe(201);
    const agentId = agent.json.id as string;

    toolCallsThenText(llm, { name: 'user_profile', arguments: {} });
    const paused = await api('POST', `/api/agents/${agentId}/messages`, { content: 'Who am I?' });
    expect(paused.status, JSON.stringify(paused.json)).toBe(200);
    expect(paused.json.status).toBe('requires_action');
    const runId = paused.json.runId as string;
    const approval = paused.json.requiredAction.approvals[0] as { id: string; expiresAt: string };
    expect(approval.expiresAt).toEqual(expect.any(String));
    expect(chatCalls(llm)).toHaveLength(1);

    server.child.kill('SIGKILL');
    await server.exited;

    server = await startServer(['serve'], { ...env, AGENT_APPROVAL_SWEEP_MS: '100' });
    api = apiClient(server.url, key);
    const done = await eventually(
      async () => {
        const run = (await api('GET', `/api/agents/${agentId}/runs/${runId}`)).json;
        return run.status === 'completed' || run.status === 'failed' ? run : undefined;
      },
      60_000,
      'the run to finish after the restart',
    );
    expect(done).toMatchObject({ status: 'completed', background: true, requiredAction: null });
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(approval.expiresAt));

    // The model read the rejection; the tool's result is the timeout, not a profile.
    const calls = chatCalls(llm);
    expect(calls).toHaveLength(2);
    const results = (calls[1]?.messages ?? []).filter((m) => m.role === 'tool').map((m) => textOf(m.content));
    expect(results).toHaveLength(1);
    expect(results[0]).toContain('rejected by timeout');
    const conversation = await api('GET', `/api/conversations/${paused.json.conversationId}`);
    const roles = conversation.json.messages.data.map((m: { role: string }) => m.role);
    expect(roles).toEqual(['user', 'assistant']);

    // Deciding now is too late.
    const late = await api('POST', `/api/agents/${agentId}/runs/${runId}/approvals`, {
      approvals: [{ toolCallId: approval.id, approve: true }],
    });
    expect(late.status, JSON.stringify(late.json)).toBe(409);
    expect(await stop(server)).toBe(0);
  }, 240_000);
});
