import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expressionSandbox } from '../../src/modules/workflows/engine/expression-sandbox.js';
import type { TestPlatform } from '../helpers/platform.js';
import { otherAccountKey, workflowPlatform } from '../workflows/support.js';
import { deploy, hook, runnerFlow } from './support.js';

/**
 * Runaway guest code never fails the server: an account holds at most its share of the sandbox workers
 * (EXPRESSION_WORKERS_PER_ACCOUNT, by default all but one), and a worker stuck in a built-in that never
 * polls its deadline is terminated (the thread, not the process) and replaced; the next execution of
 * either account runs normally. SQLite only: nothing here depends on storage.
 */

const CODE_TIMEOUT_MS = 4_000;

const waitFor = async (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000) => {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('runaway Code nodes in the sandbox', () => {
  let p: TestPlatform;
  let keyB: string;

  beforeAll(async () => {
    p = await workflowPlatform('sqlite', {
      EXPRESSION_WORKERS: '2',
      CODE_NODE_TIMEOUT_MS: String(CODE_TIMEOUT_MS),
    });
    keyB = await otherAccountKey(p);
    await deploy(p, runnerFlow('runaway-a'), p.adminKey);
    await deploy(p, runnerFlow('runaway-b'), keyB);
    // Both workers started and warm.
    await Promise.all([
      hook(p, 'runaway-a', { code: 'return 1;' }),
      hook(p, 'runaway-b', { code: 'return 1;' }),
    ]);
  });
  afterAll(async () => {
    await p.close();
  });

  it("one account's endless loops cannot occupy every sandbox worker: another account's Code node runs at once", async () => {
    const sandbox = expressionSandbox();
    const runaways = [1, 2, 3].map(() => hook(p, 'runaway-a', { code: 'for (;;) {}' }));
    // Every runaway has started its execution (and so asked the sandbox for a worker).
    await waitFor('the runaways to run', async () => {
      const res = await p.request({ method: 'GET', url: '/api/v1/executions?status=running' });
      return ((res.json() as { data?: unknown[] }).data ?? []).length >= 3;
    });
    const t0 = Date.now();
    const b = await hook(p, 'runaway-b', { code: 'return "b ran";' });
    const waited = Date.now() - t0;
    expect(b.status).toBe(200);
    expect(b.json.out).toBe('b ran');
    // Well under the runaways' 4 s: B never waited for one of them to end.
    expect(waited).toBeLessThan(CODE_TIMEOUT_MS / 2);
    expect(sandbox.busyFor(p.accountId)).toBeLessThanOrEqual(1);
    for (const r of await Promise.all(runaways)) expect(JSON.stringify(r.json)).toMatch(/took longer than/);
  }, 30_000);

  it('a worker stuck in a built-in that ignores the deadline is replaced; the next executions of both accounts run normally', async () => {
    // Array.prototype.join over a sparse array loops in C without polling the interrupt handler.
    const stuck = hook(p, 'runaway-a', { code: "return String(new Array(2 ** 32 - 1).join('').length);" });
    let healthy = 0;
    const t0 = Date.now();
    const health = (async () => {
      while (Date.now() - t0 < CODE_TIMEOUT_MS) {
        const res = await p.app.inject({ method: 'GET', url: '/health' });
        if (res.statusCode === 200) healthy++;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const answer = await stuck;
    await health;
    expect(answer.status).toBe(422);
    expect(JSON.stringify(answer.json)).toMatch(/took longer than 4000 ms/);
    // The server kept answering while the worker was stuck (the event loop never blocked).
    expect(healthy).toBeGreaterThan(5);
    for (const who of ['a', 'b', 'a']) {
      const next = await hook(p, `runaway-${who}`, {
        code: `return [1, 2, 3].map((x) => x * 2).join() + ' ${who}';`,
      });
      expect(next.status).toBe(200);
      expect(next.json.out).toBe(`2,4,6 ${who}`);
    }
    expect(expressionSandbox().size).toBeGreaterThanOrEqual(1);
  }, 30_000);
});
