import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { activate, createWorkflow, otherAccountKey, settled, workflowPlatform } from './support.js';

const node = (name: string, type: string, parameters: Record<string, unknown>, typeVersion = 1) => ({
  id: `${name}-id`,
  name,
  type: `n8n-nodes-base.${type}`,
  typeVersion,
  position: [0, 0],
  parameters,
});
const chain = (...names: string[]) =>
  Object.fromEntries(
    names.slice(0, -1).map((name, i) => [name, { main: [[{ node: names[i + 1], type: 'main', index: 0 }]] }]),
  );

/** Execute Workflow Trigger → Code (doubles `n`, or throws on `fail`). */
const child = {
  name: 'doubler',
  nodes: [
    node('Called', 'executeWorkflowTrigger', { inputSource: 'passthrough' }, 1.1),
    node(
      'Double',
      'code',
      {
        jsCode:
          'return $input.all().map((i) => { if (i.json.fail) throw new Error("child says no"); return { json: { n: i.json.n, doubled: i.json.n * 2 } }; });',
      },
      2,
    ),
  ],
  connections: chain('Called', 'Double'),
};

/** Webhook → Split Out `body.items` → Execute Workflow → (answered: all items of the last node). */
function parent(path: string, call: Record<string, unknown>) {
  return {
    name: `caller ${path}`,
    nodes: [
      node(
        'Webhook',
        'webhook',
        { httpMethod: 'POST', path, responseMode: 'lastNode', responseData: 'allEntries', options: {} },
        2,
      ),
      node('Split Out', 'splitOut', { fieldToSplitOut: 'body.items', options: {} }),
      node('Call', 'executeWorkflow', { options: {}, ...call }, 1.2),
    ],
    connections: chain('Webhook', 'Split Out', 'Call'),
  };
}

describe.each(await testDialects())('sub-workflows (Execute Workflow) on %s', (dialect) => {
  let p: TestPlatform;
  let childId: string;
  beforeAll(async () => {
    p = await workflowPlatform(dialect, { WORKFLOW_MAX_CALL_DEPTH: '3' });
    childId = await createWorkflow(p, child); // inactive: sub-workflows run either way
  });
  afterAll(() => p.close());

  const ref = (id: string) => ({ __rl: true, value: id, mode: 'id', cachedResultName: 'doubler' });
  const hook = async (path: string, call: Record<string, unknown>) => {
    await activate(p, await createWorkflow(p, parent(path, call)));
    return (items: unknown[]) =>
      p.request({ method: 'POST', url: `/webhook/${path}`, key: null, payload: { items } });
  };
  const childRuns = async () =>
    (
      (
        await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${childId}&limit=250` })
      ).json() as {
        data: Array<{ id: string; mode: string; status: string }>;
      }
    ).data;

  it('runs the callee once with all items and outputs its last node', async () => {
    const before = (await childRuns()).length;
    const call = await hook('sub-once', { workflowId: ref(childId), mode: 'once' });
    const res = await call([{ n: 1 }, { n: 2 }]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([
      { n: 1, doubled: 2 },
      { n: 2, doubled: 4 },
    ]);
    const runs = await childRuns();
    expect(runs.length - before).toBe(1);
    expect(runs[0]).toMatchObject({ mode: 'integrated', status: 'success' });
  });

  it('runs it once per item with mode each (v1 plain id too)', async () => {
    const before = (await childRuns()).length;
    const call = await hook('sub-each', { workflowId: childId, mode: 'each' });
    expect((await call([{ n: 3 }, { n: 4 }])).json()).toEqual([
      { n: 3, doubled: 6 },
      { n: 4, doubled: 8 },
    ]);
    expect((await childRuns()).length - before).toBe(2);
  });

  it('maps the callee inputs per item (workflowInputs, defineBelow)', async () => {
    const call = await hook('sub-mapped', {
      workflowId: ref(childId),
      workflowInputs: {
        mappingMode: 'defineBelow',
        value: { n: '={{ $json.x + 10 }}' },
        matchingColumns: [],
        schema: [],
      },
    });
    expect((await call([{ x: 1 }])).json()).toEqual([{ n: 11, doubled: 22 }]);
  });

  it('passes its own items on without waiting, while the callee runs queued', async () => {
    const before = (await childRuns()).length;
    const call = await hook('sub-nowait', {
      workflowId: ref(childId),
      options: { waitForSubWorkflow: false },
    });
    expect((await call([{ n: 5 }])).json()).toEqual([{ n: 5 }]);
    const runs = await until(
      async () => {
        const now = await childRuns();
        return now.length > before ? now : undefined;
      },
      'the queued callee run',
      20_000,
    );
    expect(runs.length - before).toBe(1);
    expect((await settled(p, runs[0]?.id ?? '')).status).toBe('success');
  });

  it("fails the calling node with the callee's error", async () => {
    const call = await hook('sub-fails', { workflowId: ref(childId) });
    const res = await call([{ n: 1, fail: true }]);
    expect(res.statusCode).toBe(422);
    expect(res.json().message).toContain('The sub-workflow failed: child says no');
  });

  it('fails clearly for a workflow of another account or one without the trigger', async () => {
    const foreign = await createWorkflow(p, child, await otherAccountKey(p));
    const other = await hook('sub-foreign', { workflowId: ref(foreign) });
    expect((await other([{ n: 1 }])).json().message).toContain(`Workflow '${foreign}' was not found`);
    const plain = await createWorkflow(p, {
      name: 'no trigger',
      nodes: [node('Only', 'noOp', {})],
      connections: {},
    });
    const call = await hook('sub-notrigger', { workflowId: ref(plain) });
    expect((await call([{ n: 1 }])).json().message).toContain('has no Execute Workflow Trigger node');
  });

  it('refuses fixed calls that come back at save, and stops dynamic recursion at the depth limit', async () => {
    const a = await createWorkflow(p, {
      name: 'a',
      nodes: [node('Start', 'executeWorkflowTrigger', {})],
      connections: {},
    });
    const b = await createWorkflow(p, {
      name: 'b',
      nodes: [
        node('Start', 'executeWorkflowTrigger', {}),
        node('Call A', 'executeWorkflow', { workflowId: ref(a) }, 1.2),
      ],
      connections: chain('Start', 'Call A'),
    });
    const back = await p.request({
      method: 'PUT',
      url: `/api/v1/workflows/${a}`,
      payload: {
        name: 'a',
        nodes: [
          node('Start', 'executeWorkflowTrigger', {}),
          node('Call B', 'executeWorkflow', { workflowId: ref(b) }, 1.2),
        ],
        connections: chain('Start', 'Call B'),
      },
    });
    expect(back.statusCode).toBe(400);
    expect(JSON.stringify(back.json())).toContain(`calls workflow '${b}', which calls this workflow again`);

    // Recursion through an expression: stopped at WORKFLOW_MAX_CALL_DEPTH (3) as a failed node.
    const recursive = await createWorkflow(p, {
      name: 'recursive',
      nodes: [
        node('Start', 'executeWorkflowTrigger', {}),
        node(
          'Again',
          'executeWorkflow',
          { workflowId: { __rl: true, value: '={{ $workflow.id }}', mode: 'id' } },
          1.2,
        ),
      ],
      connections: chain('Start', 'Again'),
    });
    const call = await hook('sub-recursive', { workflowId: ref(recursive) });
    const res = await call([{ n: 1 }]);
    expect(res.statusCode).toBe(422);
    expect(res.json().message).toContain('nest deeper than 3 calls');
  });

  it("runs a workflow given as JSON in the node (source 'parameter'), checked as a saved one", async () => {
    // As n8n exports it: text, no name, a Manual Trigger as its start (n8n starts there too).
    const inline = JSON.stringify({
      nodes: [
        node('Execute workflow', 'manualTrigger', {}),
        node(
          'Triple',
          'code',
          { jsCode: 'return $input.all().map((i) => ({ json: { tripled: i.json.n * 3 } }));' },
          2,
        ),
      ],
      connections: chain('Execute workflow', 'Triple'),
    });
    const call = await hook('sub-inline', { source: 'parameter', workflowJson: inline });
    const res = await call([{ n: 1 }, { n: 5 }]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([{ tripled: 3 }, { tripled: 15 }]);

    // Checked when called, as a save would be: an unknown node type fails the calling node, naming it.
    const bad = JSON.stringify({
      nodes: [node('Start', 'executeWorkflowTrigger', {}), node('X', 'noSuchNode', {})],
      connections: chain('Start', 'X'),
    });
    const failing = await hook('sub-inline-bad', { source: 'parameter', workflowJson: bad });
    const refused = await failing([{ n: 1 }]);
    expect(refused.statusCode).toBe(422);
    expect(refused.json().message).toContain('The workflow given as JSON is not valid');

    // Only the account's own credentials: another account's credential id is refused.
    const foreignCredential = (
      await p.request({
        method: 'POST',
        url: '/api/v1/credentials',
        key: await otherAccountKey(p),
        payload: { name: 'theirs', type: 'httpHeaderAuth', data: { name: 'X-Key', value: 'secret' } },
      })
    ).json().id as string;
    const borrowing = JSON.stringify({
      nodes: [
        node('Start', 'executeWorkflowTrigger', {}),
        {
          ...node(
            'Fetch',
            'httpRequest',
            {
              url: 'http://127.0.0.1:9/never',
              authentication: 'genericCredentialType',
              genericAuthType: 'httpHeaderAuth',
              options: {},
            },
            4.2,
          ),
          credentials: { httpHeaderAuth: { id: foreignCredential, name: 'theirs' } },
        },
      ],
      connections: chain('Start', 'Fetch'),
    });
    const borrower = await hook('sub-inline-borrow', { source: 'parameter', workflowJson: borrowing });
    const denied = await borrower([{ n: 1 }]);
    expect(denied.statusCode).toBe(422);
    expect(denied.json().message).toMatch(/credential/i);
    expect(denied.json().message).not.toContain('secret');
  });

  it("takes a workflow given as an object as saved: its expressions are the callee's, per item", async () => {
    const inline = {
      nodes: [
        node('Start', 'manualTrigger', {}),
        node(
          'Times ten',
          'set',
          {
            mode: 'manual',
            assignments: {
              assignments: [{ id: 'a', name: 'x', value: '={{ $json.n * 10 }}', type: 'number' }],
            },
            options: {},
          },
          3.4,
        ),
      ],
      connections: chain('Start', 'Times ten'),
    };
    const call = await hook('sub-inline-object', { source: 'parameter', workflowJson: inline });
    const res = await call([{ n: 1 }, { n: 5 }]);
    expect(res.statusCode, res.body).toBe(200);
    // Evaluated by the caller, every item would have been the first's (10, 10).
    expect(res.json()).toEqual([{ x: 10 }, { x: 50 }]);
  });

  it("bounds what mode 'each' stores: items × the workflow JSON's size, a clear node error beyond", async () => {
    // ~200,000 characters (under the 256,000 a node may hold) × 100 items: over 16,000,000.
    const inline = JSON.stringify({
      nodes: [
        node('Start', 'manualTrigger', {}),
        node('Note', 'stickyNote', { content: 'x'.repeat(200_000) }),
      ],
      connections: {},
    });
    const call = await hook('sub-inline-each', { source: 'parameter', workflowJson: inline, mode: 'each' });
    const res = await call(Array.from({ length: 100 }, (_, n) => ({ n })));
    expect(res.statusCode).toBe(422);
    expect(res.json().message).toMatch(
      /Running the workflow given as JSON once per item would store \d+ characters of it \(at most 16000000 per run\)/,
    );
    // Two items stay well under: each runs.
    const few = await call([{ n: 1 }, { n: 2 }]);
    expect(few.statusCode, few.body).toBe(200);
  });

  it('refuses sources that read files or URLs, and JSON that can never run, at save; a missing id fails the run', async () => {
    for (const [call, message] of [
      [{ source: 'url', workflowUrl: 'https://example.com/wf.json' }, 'parameters.workflowUrl'],
      [{ source: 'localFile' }, "'localFile' is not supported here"],
      [{ source: 'parameter' }, "is required with source 'parameter'"],
      [{ source: 'parameter', workflowJson: '{ not json' }, 'is not valid JSON'],
      [{ source: 'parameter', workflowJson: '{"connections":{}}' }, 'must be a workflow'],
      // From the run's data, a webhook's caller would choose what runs with the account's credentials.
      [
        { source: 'parameter', workflowJson: '={{ $json.body.workflow }}' },
        'parameters.workflowJson","message":"cannot be an expression',
      ],
      [
        { source: 'parameter', workflowJson: JSON.stringify({ nodes: [], pad: 'x'.repeat(256_000) }) },
        'must be at most 256000 characters',
      ],
    ] as const) {
      const res = await p.request({
        method: 'POST',
        url: '/api/v1/workflows',
        payload: parent('sub-bad', call),
      });
      expect(res.statusCode, JSON.stringify(call)).toBe(400);
      expect(JSON.stringify(res.json()), JSON.stringify(call)).toContain(message);
    }
    // n8n imports a node whose workflow is not chosen yet; running it fails that node.
    const unset = await hook('sub-unset', {});
    const res = await unset([{ n: 1 }]);
    expect(res.statusCode).toBe(422);
    expect(res.json().message).toContain('The workflow to call has no id');
  });
});

describe.each(await testDialects())('a call tree shares one node-run bound on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect, { WORKFLOW_MAX_NODE_RUNS: '20' });
  });
  afterAll(() => p.close());

  it('counts the runs of waited callees against the caller: a fan-out past the bound fails', async () => {
    const leaf = await createWorkflow(p, child); // 2 node runs per call
    const body = parent('tree-fan', {
      workflowId: { __rl: true, value: leaf, mode: 'id' },
      mode: 'each',
    });
    await activate(p, await createWorkflow(p, body));
    const call = (n: number) =>
      p.request({
        method: 'POST',
        url: '/webhook/tree-fan',
        key: null,
        payload: { items: Array.from({ length: n }, (_, i) => ({ n: i })) },
      });
    // 3 runs of the caller + 2 per item: 5 items fit in 20, 12 do not.
    expect((await call(5)).statusCode).toBe(200);
    const over = await call(12);
    expect(over.statusCode).toBe(422);
    expect(over.json().message).toContain('limit of 20 node runs');
  });
});
