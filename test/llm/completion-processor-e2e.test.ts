import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listeningPlatform } from '../helpers/listening.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createCredential } from '../workflows/support.js';

/**
 * The shipped llm-completion-processor on the default configuration: LLM_URL unset, so its model
 * call goes to this platform's own /api/chat and the built-in extractive model answers.
 */
describe.each(await testDialects())('llm-completion-processor end to end on %s', (dialect) => {
  let p: TestPlatform;

  beforeAll(async () => {
    p = await listeningPlatform(dialect);
    const llmKey = await p.createKey({
      name: 'workflow → llm',
      type: 'production',
      role: 'Writer',
      services: ['llm'],
    });
    await createCredential(p, 'llm-api-key', 'httpBearerAuth', { token: llmKey.key });
    // Activation wants every credential the workflow names; the docs and flow branches are not run here.
    await createCredential(p, 'docs-api-token', 'httpBearerAuth', { token: 'unused' });
    await createCredential(p, 'flow-api-key', 'httpBearerAuth', { token: 'unused' });
    await activate(p, 'wf_llm_completion_processor');
  });
  afterAll(() => p?.close());

  const deliver = (body: Record<string, string>) =>
    p.app.inject({
      method: 'POST',
      url: '/webhook/llm-completion-processor',
      payload: body,
      headers: { 'x-api-key': p.adminKey },
    });

  it('llm:builtin/extractive: the completion reaches the platform’s own model and its answer comes back', async () => {
    const res = await deliver({
      completionId: 'cmp-e2e-1',
      model: 'upstream-model',
      result:
        'The warehouse in Lyon ships candles on Mondays. Gift cards never expire. Which city ships the candles?',
      destination: 'llm:builtin/extractive',
    });
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json() as Record<string, string>;
    expect(answer).toMatchObject({
      routed: true,
      completionId: 'cmp-e2e-1',
      target: 'llm',
      model: 'builtin/extractive',
    });
    // The extractive model treats the last user message as both question and context: it quotes.
    expect(answer.answer).toContain('The warehouse in Lyon ships candles on Mondays.');
    const calls = await p.request({ method: 'GET', url: '/v1/llm/requests?model=builtin/extractive' });
    expect((calls.json() as { data: Array<{ status: string }> }).data[0]).toMatchObject({
      status: 'success',
    });
  });

  it('an unknown model fails the execution at the model node, not the server', async () => {
    const res = await deliver({
      completionId: 'cmp-e2e-2',
      model: 'm',
      result: 'anything',
      destination: 'llm:no-such-model',
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(600);
    expect(res.body).toMatch(/To model/);
  });
});
