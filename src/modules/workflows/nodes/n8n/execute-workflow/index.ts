import { Type } from 'typebox';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json, ValidationProblem } from '../../../engine/types.js';
import {
  MAX_WORKFLOW_JSON_CHARS_PER_RUN,
  workflowIdOf,
  workflowJsonProblems,
  workflowJsonSize,
} from './workflow-ref.js';

/** n8n's resource locator for a workflow (v1.1+), or v1's plain id. */
const WorkflowRef = Type.Union([
  Type.String({ maxLength: 200 }),
  Type.Object(
    {
      __rl: Type.Optional(Type.Boolean()),
      value: Type.Union([Type.String({ maxLength: 2000 }), Type.Number()]),
      mode: Type.Optional(Type.Enum(['id', 'list', 'url'] as const)),
      cachedResultName: Type.Optional(Type.String()),
      cachedResultUrl: Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  ),
]);

const ExecuteWorkflowParameters = Type.Object(
  {
    /**
     * `database` (a workflow of the account) or `parameter` (workflow JSON in the node, checked as a
     * saved one when called); `localFile` and `url` are refused at save: they read the server's disk
     * or fetch code from elsewhere.
     */
    source: Type.Enum(['database', 'localFile', 'parameter', 'url'] as const, { default: 'database' }),
    workflowId: Type.Optional(WorkflowRef),
    workflowJson: Type.Optional(Type.Unknown()),
    mode: Type.Enum(['once', 'each'] as const, { default: 'once' }),
    /** v1.2+: the inputs the callee's trigger declares, mapped per item (n8n's resource mapper). */
    workflowInputs: Type.Optional(
      Type.Object(
        {
          mappingMode: Type.Optional(Type.Enum(['defineBelow', 'autoMapInputData'] as const)),
          value: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
          matchingColumns: Type.Optional(Type.Array(Type.String())),
          schema: Type.Optional(Type.Array(Type.Unknown())),
          attemptToConvertTypes: Type.Optional(Type.Boolean()),
          convertFieldsToString: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
    options: Type.Object(
      { waitForSubWorkflow: Type.Optional(Type.Boolean()) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/**
 * n8n's Execute Workflow (v1–1.3): runs another workflow of the account from its Execute Workflow
 * Trigger with this node's items (all at once, or once per item) and outputs what its last node
 * output; without waiting, it passes its own items on (sub-workflow.ts runs the call).
 */
export const executeWorkflowNode = defineNode({
  type: 'n8n-nodes-base.executeWorkflow',
  versions: [1, 1.1, 1.2, 1.3],
  schema: ExecuteWorkflowParameters,
  // The callee's JSON is taken as saved: its own nodes' expressions are the callee's, not this node's.
  rawParameters: ['workflowJson'],
  // A waited call can run for long: a crash meanwhile resumes the caller here, which calls again.
  checkpoint: (params) =>
    (params.options as { waitForSubWorkflow?: unknown } | undefined)?.waitForSubWorkflow !== false,
  check(params) {
    const problems: ValidationProblem[] = [];
    if (params.source === 'parameter') return workflowJsonProblems(params.workflowJson);
    if (params.source !== 'database')
      problems.push({
        path: 'parameters.source',
        message: `'${params.source}' is not supported here: call a saved workflow of the account ('database') or give its JSON ('parameter')`,
      });
    // A missing workflow id imports, as in n8n (templates ship the node unset): the run fails the node.
    return problems;
  },
  async execute(ctx) {
    const call = ctx.deps.subWorkflow;
    if (!call) throw new NodeOperationError('Sub-workflows need the workflow service');
    const first = await ctx.params(0);
    const wait = first.options.waitForSubWorkflow !== false;
    // `each` stores the workflow JSON once per item's execution: the run's total is bounded.
    if (first.source === 'parameter' && first.mode === 'each') {
      const stored = workflowJsonSize(first.workflowJson) * ctx.items.length;
      if (stored > MAX_WORKFLOW_JSON_CHARS_PER_RUN)
        throw new NodeOperationError(
          `Running the workflow given as JSON once per item would store ${stored} characters of it (at most ${MAX_WORKFLOW_JSON_CHARS_PER_RUN} per run)`,
          { description: "Save it as a workflow and call that by id, or use mode 'once'" },
        );
    }
    const inputOf = async (index: number): Promise<{ id: string; item: Item; json?: unknown }> => {
      const p = index === 0 ? first : await ctx.params(index);
      const id = p.source === 'parameter' ? '' : workflowIdOf(p.workflowId);
      if (p.source !== 'parameter' && (!id || isExpression(id)))
        throw new NodeOperationError('The workflow to call has no id', {
          description: "Choose the workflow in the node's Workflow parameter",
        });
      const item = ctx.items[index] ?? { json: {} };
      const mapped = p.workflowInputs?.mappingMode === 'defineBelow' ? p.workflowInputs.value : null;
      const json = p.source === 'parameter' ? { json: p.workflowJson } : {};
      return { id: id ?? '', item: mapped ? { json: mapped as Record<string, Json> } : item, ...json };
    };
    const run = async (id: string, items: Item[], workflowJson?: unknown) => {
      const before = ctx.nodeRuns.used();
      const done = await call({
        workflowId: id,
        ...(first.source === 'parameter' ? { workflowJson: workflowJson ?? first.workflowJson } : {}),
        items,
        wait,
        parentExecutionId: ctx.execution.id,
        nodeRunsBefore: before,
      });
      // The callee counted on from `before`: its runs count against this execution's bound too.
      ctx.nodeRuns.add(done.nodeRuns - before);
      return done.items;
    };
    if (first.mode === 'once') {
      // One item at a time: each is a sandbox call, and thousands at once would fill the sandbox's
      // queue (refused as busy) rather than wait their turn.
      const inputs: Array<Awaited<ReturnType<typeof inputOf>>> = [];
      for (let i = 0; i < ctx.items.length; i++) inputs.push(await inputOf(i));
      const id = inputs[0]?.id ?? workflowIdOf(first.workflowId) ?? '';
      const result = await run(
        id,
        inputs.length > 0 ? inputs.map((i) => i.item) : [{ json: {} }],
        inputs[0]?.json,
      );
      return output(wait ? result : ctx.items);
    }
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const { id, item, json } = await inputOf(i);
      const result = await run(id, [item], json);
      out.push(...(wait ? result : [ctx.items[i] as Item]));
    }
    return output(out);
  },
});
