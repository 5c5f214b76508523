import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExpressionEvaluator } from '../../src/modules/workflows/engine/expressions.js';
import type { TestPlatform } from '../helpers/platform.js';
import { until } from '../helpers/until.js';
import { activate, createWorkflow, flow, settled, workflowPlatform } from './support.js';

// The audit's runaway expressions (issue 19, item 1), in JSONata (which a workflow may still choose) and
// their JavaScript twins. Each ran inside a built-in function, past the old between-steps time check:
// one aborted V8 (every service down), one held the event loop for 10 s. Now each fails its own
// execution, bounded in time and memory, while the server keeps answering.
const RUNAWAYS: Record<string, { expression: string; language: 'jsonata' | 'javascript' }> = {
  // Array(140000001).join(…) in JSONata's $pad: V8 aborted the process with "invalid size error".
  pad: { expression: '={{ $length($pad("", 140000000)) }}', language: 'jsonata' },
  // Quadratic de-duplication: ~10 s of one C++-speed loop on the main thread.
  distinct: { expression: '={{ $count($distinct([1..100000])) }}', language: 'jsonata' },
  // Memory: a string doubled until it no longer fits.
  hoard: {
    expression: '={{ $reduce([1..40], function($a, $i) { $a & $a }, "0123456789abcdef") }}',
    language: 'jsonata',
  },
  padJs: { expression: '={{ "".padStart(140000000, "x").length }}', language: 'javascript' },
  distinctJs: {
    expression:
      '={{ (() => { const a = []; for (let i = 0; i < 100000; i++) if (!a.includes(i)) a.push(i); return a.length; })() }}',
    language: 'javascript',
  },
  hoardJs: {
    expression:
      '={{ (() => { let s = "0123456789abcdef"; for (let i = 0; i < 40; i++) s += s; return s.length; })() }}',
    language: 'javascript',
  },
};

describe('runaway expressions fail their own execution, never the server', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform('sqlite', { EXPRESSION_TIMEOUT_MS: '1000', EXPRESSION_MEMORY_MB: '32' });
    for (const [name, { expression, language }] of Object.entries(RUNAWAYS)) {
      const id = await createWorkflow(p, {
        ...flow(`runaway ${name}`, [
          {
            name: 'Webhook',
            type: 'webhook',
            parameters: { path: `runaway-${name}`, responseMode: 'lastNode' },
          },
          { name: 'Set', type: 'set', parameters: { values: { out: expression } } },
        ]),
        settings: { expressionLanguage: language },
      });
      await activate(p, id);
    }
    await activate(
      p,
      await createWorkflow(
        p,
        flow('fine', [
          { name: 'Webhook', type: 'webhook', parameters: { path: 'fine', responseMode: 'lastNode' } },
          {
            name: 'Set',
            type: 'set',
            parameters: {
              values: { out: '={{ [...new Set(Array.from({ length: 200 }, (_, i) => i))].length }}' },
            },
          },
        ]),
      ),
    );
  });
  afterAll(() => p.close());

  const call = (path: string) =>
    p.request({
      method: 'POST',
      url: `/webhook/${path}`,
      payload: {},
      headers: { 'content-type': 'application/json' },
    });

  it.each(Object.keys(RUNAWAYS))(
    '%s: the execution fails with a limit error; /health answers meanwhile',
    async (name) => {
      const running = call(`runaway-${name}`);
      let healthChecks = 0;
      let done = false;
      void running.finally(() => {
        done = true;
      });
      // The expression runs (or has already ended) before /health is asked.
      await until(
        async () =>
          done ||
          (
            (await p.request({ method: 'GET', url: '/api/v1/executions?status=running' })).json() as {
              data: unknown[];
            }
          ).data.length > 0,
        'the runaway execution to start',
        20_000,
      );
      // The event loop is free: /health answers again and again while the expression runs (at least
      // once: a runaway refused at once may already have ended).
      do {
        const health = await p.request({ method: 'GET', url: '/health', key: null });
        expect(health.statusCode).toBe(200);
        healthChecks++;
      } while (!done && healthChecks < 5);
      expect(healthChecks).toBeGreaterThan(0);
      const res = await running;
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(600);
      expect(res.json()).toMatchObject({ error: true });
      expect(JSON.stringify(res.json())).toMatch(
        /took longer than 1000 ms|more memory than allowed|timeout|string too long/,
      );
      const list = (await p.request({ method: 'GET', url: '/api/v1/executions?limit=1' })).json() as {
        data: Array<{ id: string }>;
      };
      expect((await settled(p, list.data[0]?.id ?? '')).status).toBe('error');
      // And the next workflow runs normally.
      const fine = await call('fine');
      expect(fine.statusCode).toBe(200);
      expect(fine.json()).toMatchObject({ out: 200 });
    },
  );
});

describe('a regular expression over a 1 MB body (llm-completion-processor) leaves the event loop free', () => {
  it('evaluates off the main thread', async () => {
    const evaluator = new ExpressionEvaluator(10_000);
    const result = `${'lorem ipsum dolor sit amet '.repeat(40_000)}\n# Title line\n${'x'.repeat(10_000)}`;
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const title = await evaluator.evaluate(
      '={{ /^#[ \\t]+(.+)$/m.exec($json.body.result)?.[1].trim() ?? "" }}',
      {
        json: { body: { result } },
        node: {},
        workflow: { id: 'wf', name: 'llm' },
        execution: { id: 'exe', mode: 'webhook', resumeUrl: '' },
        env: {},
        now: new Date(),
      },
    );
    clearInterval(timer);
    expect(title).toBe('Title line');
    // Some turns of the loop happened while the 1 MB was matched elsewhere (a blocked loop counts none).
    expect(ticks).toBeGreaterThan(0);
  });
});
