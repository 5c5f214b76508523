import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FinishedNode } from '../../src/modules/workflows/executions/lifecycle-hooks.js';
import type { WorkflowsApi } from '../../src/modules/workflows/index.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { createWorkflow, flow, settled, workflowPlatform } from './support.js';

/** webhook → set → if → noOp: four node runs, the last on the if's false branch. */
const branchFlow = (name: string) =>
  flow(
    name,
    [
      { name: 'Webhook', type: 'webhook', parameters: { path: name, responseMode: 'lastNode' } },
      {
        name: 'Answer',
        type: 'set',
        parameters: { values: { n: '={{ $json.body.n }}' }, keepOnlySet: true },
      },
      {
        name: 'Big?',
        type: 'if',
        parameters: { conditions: [{ value1: '={{ $json.n }}', operation: 'gt', value2: 5 }] },
      },
      { name: 'Small', type: 'noOp' },
    ],
    [
      ['Webhook', 'Answer'],
      ['Answer', 'Big?'],
      ['Big?', 'Small', 1],
    ],
  );

describe.each(await testDialects())("the runner's nodeFinished hook on %s", (dialect) => {
  let p: TestPlatform;
  let api: WorkflowsApi;
  const heard: FinishedNode[] = [];

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    const workflows = p.ctx.apis.workflows;
    if (!workflows) throw new Error('workflows module missing');
    api = workflows;
    api.runner.hooks.addHandler(
      'nodeFinished',
      (event) => {
        heard.push(event);
      },
      // A subscriber that fails must not decide the run.
      () => {
        throw new Error('a broken subscriber');
      },
    );
  });
  afterAll(async () => {
    await p.close();
  });

  it('tells subscribers of every node run with its execution; a subscriber that throws changes nothing', async () => {
    const id = await createWorkflow(p, branchFlow('node-finished'));
    const run = { accountId: p.accountId, workflowId: id, mode: 'flow' as const, timeoutMs: 20_000 };
    const { executionId, response } = await api.direct.run({ ...run, body: { n: 2 } });
    expect(response).toMatchObject({ kind: 'reply', body: { n: 2 } });
    const execution = await settled(p, executionId);
    expect(execution).toMatchObject({ status: 'success' });
    const ours = heard.filter((e) => e.row.id === executionId);
    expect(ours.map((e) => [e.nodeName, e.nodeType, e.runIndex])).toEqual([
      ['Webhook', 'n8n-nodes-platform.webhook', 0],
      ['Answer', 'n8n-nodes-base.set', 0],
      ['Big?', 'n8n-nodes-base.if', 0],
      ['Small', 'n8n-nodes-base.noOp', 0],
    ]);
    expect(ours.every((e) => e.row.workflow_id === id && e.row.status === 'running')).toBe(true);
    expect(ours[2]?.data.output.map((o) => o.length)).toEqual([0, 1]);
  });
});
