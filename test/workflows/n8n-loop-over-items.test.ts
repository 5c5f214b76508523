import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createWorkflow, settled, workflowPlatform } from './support.js';

type N8nNode = {
  name: string;
  type: string;
  typeVersion: number;
  parameters: Record<string, unknown>;
  webhookId?: string;
};
type Edge = [from: string, to: string, output?: number];

/** A workflow as n8n exports it, from nodes and `[from, to, output]` edges. */
function n8nWorkflow(name: string, nodes: N8nNode[], edges: Edge[]) {
  const connections: Record<string, { main: Array<Array<{ node: string; type: 'main'; index: number }>> }> =
    {};
  for (const [from, to, out = 0] of edges) {
    const entry = connections[from] ?? { main: [] };
    while (entry.main.length <= out) entry.main.push([]);
    entry.main[out]?.push({ node: to, type: 'main', index: 0 });
    connections[from] = entry;
  }
  return {
    name,
    nodes: nodes.map((n, i) => ({ id: `${name}-${i}`, position: [i * 200, 0], ...n })),
    connections,
    settings: { executionOrder: 'v1' },
  };
}

const webhook = (path: string, responseMode: string): N8nNode => ({
  name: 'Webhook',
  type: 'n8n-nodes-base.webhook',
  typeVersion: 2,
  webhookId: path,
  parameters: { httpMethod: 'POST', path, responseMode, options: {} },
});
const splitOut: N8nNode = {
  name: 'Split Out',
  type: 'n8n-nodes-base.splitOut',
  typeVersion: 1,
  parameters: { fieldToSplitOut: 'body.items', options: {} },
};
const loop = (parameters: Record<string, unknown>): N8nNode => ({
  name: 'Loop Over Items',
  type: 'n8n-nodes-base.splitInBatches',
  typeVersion: 3,
  parameters,
});
/** The loop body: marks each item with the round ($runIndex) it went through. */
const code: N8nNode = {
  name: 'Code',
  type: 'n8n-nodes-base.code',
  typeVersion: 2,
  parameters: {
    jsCode:
      'return $input.all().map((i) => ({ json: { ...i.json, doubled: i.json.n * 2, round: $runIndex } }));',
  },
};
const respond: N8nNode = {
  name: 'Respond to Webhook',
  type: 'n8n-nodes-base.respondToWebhook',
  typeVersion: 1.1,
  parameters: { respondWith: 'allIncomingItems', options: {} },
};

/** Webhook → Split Out → Loop Over Items; loop → (body) → back; done → Respond to Webhook. */
function loopFlow(path: string, loopParameters: Record<string, unknown>) {
  return n8nWorkflow(
    `loop ${path}`,
    [webhook(path, 'responseNode'), splitOut, loop(loopParameters), code, respond],
    [
      ['Webhook', 'Split Out'],
      ['Split Out', 'Loop Over Items'],
      ['Loop Over Items', 'Respond to Webhook', 0],
      ['Loop Over Items', 'Code', 1],
      ['Code', 'Loop Over Items'],
    ],
  );
}

type RunData = Record<string, Array<{ data: { main: Array<Array<{ json: Record<string, unknown> }>> } }>>;
const runDataOf = (exe: Record<string, unknown>) =>
  (exe.data as { resultData: { runData: RunData; error?: { message: string } } }).resultData;

describe.each(await testDialects())('n8n Loop Over Items over HTTP on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect, { WORKFLOW_MAX_NODE_RUNS: '200' });
  });
  afterAll(() => p.close());

  const send = async (path: string, items: unknown[]) => {
    const res = await p.request({ method: 'POST', url: `/webhook/${path}`, key: null, payload: { items } });
    return { status: res.statusCode, body: res.json() as unknown };
  };
  const numbers = (...ns: number[]) => ns.map((n) => ({ n }));

  it('loops one item at a time and answers every processed item on done', async () => {
    await activate(p, await createWorkflow(p, loopFlow('loop-one', { batchSize: 1, options: {} })));
    const res = await send('loop-one', numbers(1, 2, 3));
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { n: 1, doubled: 2, round: 0 },
      { n: 2, doubled: 4, round: 1 },
      { n: 3, doubled: 6, round: 2 },
    ]);
  });

  it('loops in batches of 3 as n8n exports them (with the editor notice)', async () => {
    const id = await createWorkflow(
      p,
      loopFlow('loop-three', { splitInBatchesNotice: '', batchSize: 3, options: {} }),
    );
    await activate(p, id);
    const res = await send('loop-three', numbers(1, 2, 3, 4, 5, 6, 7));
    expect(res.status).toBe(200);
    expect((res.body as Array<{ n: number; round: number }>).map((i) => [i.n, i.round])).toEqual([
      [1, 0],
      [2, 0],
      [3, 0],
      [4, 1],
      [5, 1],
      [6, 1],
      [7, 2],
    ]);
    const list = await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${id}` });
    const [exe] = (list.json() as { data: Array<{ id: string }> }).data;
    const { runData } = runDataOf(await settled(p, exe?.id as string));
    // n8n's run data: three rounds on `loop` (output 1), then everything on `done` (output 0).
    expect(
      (runData['Loop Over Items'] ?? []).map((r) => r.data.main.map((o) => o.map((i) => i.json.n))),
    ).toEqual([
      [[], [1, 2, 3]],
      [[], [4, 5, 6]],
      [[], [7]],
      [[1, 2, 3, 4, 5, 6, 7], []],
    ]);
    expect(runData.Code).toHaveLength(3);
  });

  it('never runs the loop on an empty input, as n8n does not', async () => {
    await activate(p, await createWorkflow(p, loopFlow('loop-empty', { batchSize: 1, options: {} })));
    const res = await send('loop-empty', []);
    expect(res.status).toBe(200);
    const { executionId } = res.body as { message: string; executionId: string };
    expect(res.body).toEqual({ message: 'Workflow executed successfully', executionId });
    const exe = await settled(p, executionId);
    expect(exe.status).toBe('success');
    expect(Object.keys(runDataOf(exe).runData).sort()).toEqual(['Split Out', 'Webhook']);
  });

  it('keeps its place across a Wait inside the loop, resumed by time', async () => {
    const flow = n8nWorkflow(
      'loop wait',
      [
        webhook('loop-wait', 'onReceived'),
        splitOut,
        loop({ batchSize: 2, options: {} }),
        {
          name: 'Wait',
          type: 'n8n-nodes-base.wait',
          typeVersion: 1.1,
          parameters: { amount: 30, unit: 'seconds' },
        },
        code,
        { name: 'Done', type: 'n8n-nodes-base.noOp', typeVersion: 1, parameters: {} },
      ],
      [
        ['Webhook', 'Split Out'],
        ['Split Out', 'Loop Over Items'],
        ['Loop Over Items', 'Done', 0],
        ['Loop Over Items', 'Wait', 1],
        ['Wait', 'Code'],
        ['Code', 'Loop Over Items'],
      ],
    );
    await activate(p, await createWorkflow(p, flow));
    const res = await send('loop-wait', numbers(1, 2, 3));
    const { executionId } = res.body as { executionId: string };
    // Two batches (2 + 1): two pauses, each resumed when its time comes.
    for (let pause = 1; pause <= 2; pause++) {
      const exe = await waitingAt(executionId, pause);
      expect(runDataOf(exe).runData.Code ?? []).toHaveLength(pause - 1);
      p.clock.advance(31);
      expect(await p.ctx.apis.workflows?.maintenance.resumeDue()).toBe(1);
    }
    const done = await settled(p, executionId, 20_000, ['waiting']);
    expect(done.status).toBe('success');
    const { runData } = runDataOf(done);
    expect(runData.Done?.[0]?.data.main[0]?.map((i) => i.json)).toEqual([
      { n: 1, doubled: 2, round: 0 },
      { n: 2, doubled: 4, round: 0 },
      { n: 3, doubled: 6, round: 1 },
    ]);
  });

  /** Polls until the execution waits with `count` runs of its Wait node. */
  async function waitingAt(executionId: string, count: number): Promise<Record<string, unknown>> {
    const end = Date.now() + 20_000;
    for (;;) {
      const exe = await settled(p, executionId, 20_000, []);
      if (exe.status === 'waiting' && (runDataOf(exe).runData.Wait ?? []).length === count) return exe;
      if (exe.status !== 'waiting' || Date.now() > end)
        throw new Error(`not waiting at pause ${count}: ${JSON.stringify(exe.status)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('lets expressions read the loop\'s context ($node["Loop Over Items"].context)', async () => {
    const body: N8nNode = {
      name: 'Code',
      type: 'n8n-nodes-base.set',
      typeVersion: 3.4,
      parameters: {
        assignments: {
          assignments: [
            {
              id: 'a',
              name: 'last',
              value: '={{ $node["Loop Over Items"].context["noItemsLeft"] }}',
              type: 'boolean',
            },
          ],
        },
        includeOtherFields: true,
        options: {},
      },
    };
    const flow = loopFlow('loop-context', { batchSize: 1, options: {} });
    flow.nodes[3] = { ...flow.nodes[3], ...body } as (typeof flow.nodes)[number];
    await activate(p, await createWorkflow(p, flow));
    const res = await send('loop-context', numbers(1, 2));
    expect(res.body).toEqual([
      { n: 1, last: false },
      { n: 2, last: true },
    ]);
  });

  it('fails an endless loop at the node-run limit, naming it', async () => {
    // A → B → A never ends: WORKFLOW_MAX_NODE_RUNS (200 in this suite) stops it.
    const flow = n8nWorkflow(
      'endless',
      [
        webhook('loop-endless', 'lastNode'),
        {
          name: 'Start',
          type: 'n8n-nodes-base.code',
          typeVersion: 2,
          parameters: { jsCode: 'return [{ json: { n: 1 } }];' },
        },
        { name: 'A', type: 'n8n-nodes-base.noOp', typeVersion: 1, parameters: {} },
        { name: 'B', type: 'n8n-nodes-base.noOp', typeVersion: 1, parameters: {} },
      ],
      [
        ['Webhook', 'Start'],
        ['Start', 'A'],
        ['A', 'B'],
        ['B', 'A'],
      ],
    );
    await activate(p, await createWorkflow(p, flow));
    const res = await send('loop-endless', []);
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toContain('exceeded the limit of 200 node runs');
  }, 30_000);

  it('refuses unknown parameters and a batch size below 1 with 400', async () => {
    for (const [parameters, field] of [
      [{ batchSize: 1, batchInterval: 5 }, 'batchInterval'],
      [{ batchSize: 1, options: { reset: false, keepOrder: true } }, 'options.keepOrder'],
      [{ batchSize: 0 }, 'batchSize'],
    ] as const) {
      const res = await p.request({
        method: 'POST',
        url: '/api/v1/workflows',
        payload: loopFlow('loop-bad', parameters),
      });
      expect(res.statusCode, field).toBe(400);
      const body = res.json() as Record<string, unknown>;
      expect(body, field).toMatchObject({ error: true, code: 'VALIDATION_ERROR' });
      expect(JSON.stringify(body.details), field).toContain(`nodes[2].parameters.${field}`);
    }
  });
});
