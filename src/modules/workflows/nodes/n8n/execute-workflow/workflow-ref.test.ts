import { describe, expect, it } from 'vitest';
import { testDeps, workflow } from '../../../engine/testing.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

/** Save-time problems of a workflow whose one calling node has these parameters. */
function problemsOf(type: string, typeVersion: number, parameters: Record<string, unknown>) {
  const def = workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      { name: 'Call', type, typeVersion, parameters },
    ],
    [['T', 'Call']],
  );
  return engine.validate(def).filter((p) => p.path.includes('workflowJson'));
}

describe("a workflow given as JSON (source 'parameter')", () => {
  for (const [type, version] of [
    ['n8n-nodes-base.executeWorkflow', 1.2],
    ['@n8n/n8n-nodes-langchain.toolWorkflow', 2.2],
  ] as const)
    it(`${type}: an expression is refused at save, naming the parameter and why`, () => {
      const problems = problemsOf(type, version, {
        source: 'parameter',
        workflowJson: '={{ $json.body.wf }}',
      });
      expect(problems).toEqual([
        {
          path: expect.stringMatching(/parameters\.workflowJson$/),
          message: expect.stringMatching(/^cannot be an expression: .*this account's credentials/),
        },
      ]);
      // A fixed workflow is fine, text or object.
      const fixed = { nodes: [{ name: 'S', type: 'n8n-nodes-base.manualTrigger', parameters: {} }] };
      expect(problemsOf(type, version, { source: 'parameter', workflowJson: fixed })).toEqual([]);
      expect(problemsOf(type, version, { source: 'parameter', workflowJson: JSON.stringify(fixed) })).toEqual(
        [],
      );
    });

  it('an object over the size bound is refused as text is', () => {
    const big = { nodes: [], pad: 'x'.repeat(256_000) };
    expect(
      problemsOf('n8n-nodes-base.executeWorkflow', 1.2, { source: 'parameter', workflowJson: big }),
    ).toEqual([
      {
        path: expect.stringMatching(/parameters\.workflowJson$/),
        message: 'must be at most 256000 characters',
      },
    ]);
  });
});
