import { afterAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/modules/auth/key-format.js';
import { chatCalls } from '../agents/support.js';
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
 * Issue 35: a background agent run survives a SIGKILL of the process running it. The server (the
 * in-process queue, a SQLite file) is killed while the run's model call is in flight; after the
 * restart the run is taken up again and completes, with one answer stored. Killed a second time
 * mid-run, the run is marked failed (WORKER_CRASHED) at the next start, once, never run a third time.
 */

let fake: FakeLlmServer | undefined;

afterAll(async () => {
  await cleanup();
  await fake?.close();
});

describe('a background agent run whose server is SIGKILLed mid-run', () => {
  it('is taken up again after the restart and completes; killed twice, it fails once', async () => {
    fake = await startFakeOpenAi();
    const llm = fake;
    const key = generateKey('production');
    const env = {
      ...baseEnv(tempDir()),
      PLATFORM_BOOTSTRAP_KEY: key,
      LLM_MODELS: JSON.stringify([
        { name: 'gpt-4o-mini', provider: 'openai', baseUrl: llm.url, timeoutMs: 120_000 },
      ]),
    };
    const boot = () => startServer(['serve'], env);
    let server: PlatformProcess & { url: string } = await boot();
    let api = apiClient(server.url, key);
    const agent = await api('POST', '/api/agents', { name: 'bg', model: 'gpt-4o-mini' });
    expect(agent.status, JSON.stringify(agent.json)).toBe(201);
    const agentId = agent.json.id as string;
    const runOf = async (runId: string) => (await api('GET', `/api/agents/${agentId}/runs/${runId}`)).json;

    /** Starts a background turn and waits until its model call is held by the fake. */
    const startHeld = async (content: string) => {
      const before = chatCalls(llm).length;
      llm.delayHeadersMs = 600_000;
      const res = await api('POST', `/api/agents/${agentId}/messages`, { content, background: true });
      expect(res.status, JSON.stringify(res.json)).toBe(202);
      await eventually(
        async () => (chatCalls(llm).length > before ? true : undefined),
        30_000,
        'the model call',
      );
      expect((await runOf(res.json.id)).status).toBe('in_progress');
      return res.json as { id: string; conversationId: string };
    };
    const killAndBoot = async () => {
      server.child.kill('SIGKILL');
      await server.exited;
      server = await boot();
      api = apiClient(server.url, key);
    };

    // Killed once: taken up again after the restart, completed, one answer.
    const first = await startHeld('Survive a kill');
    llm.delayHeadersMs = 0;
    const calls = chatCalls(llm).length;
    await killAndBoot();
    const done = await eventually(
      async () => {
        const run = await runOf(first.id);
        return run.status === 'completed' ? run : undefined;
      },
      60_000,
      'the run to complete after the restart',
    );
    expect(chatCalls(llm).length).toBe(calls + 1);
    const conversation = await api('GET', `/api/conversations/${first.conversationId}`);
    const roles = conversation.json.messages.data.map((m: { role: string }) => m.role);
    expect(roles).toEqual(['user', 'assistant']);
    expect(conversation.json.messages.data[1].id).toBe(done.messageId);

    // Killed on its first run and again on its second: failed at the third start, not run again.
    const second = await startHeld('Die twice');
    await killAndBoot();
    await eventually(
      async () =>
        (await runOf(second.id)).status === 'in_progress' && chatCalls(llm).length > calls + 2
          ? true
          : undefined,
      60_000,
      'the second take-up of the run',
    );
    const before = chatCalls(llm).length;
    llm.delayHeadersMs = 0;
    await killAndBoot();
    const failed = await eventually(
      async () => {
        const run = await runOf(second.id);
        return run.status === 'failed' ? run : undefined;
      },
      60_000,
      'the run to fail after its second crash',
    );
    expect(failed.error).toMatchObject({ code: 'WORKER_CRASHED' });
    expect(chatCalls(llm).length).toBe(before);
    expect(server.child.exitCode).toBeNull();
    expect(await stop(server)).toBe(0);
  }, 240_000);
});
