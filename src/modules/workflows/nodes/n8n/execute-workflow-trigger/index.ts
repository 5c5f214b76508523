import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';

const InputField = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    type: Type.Optional(Type.Enum(['any', 'string', 'number', 'boolean', 'array', 'object'] as const)),
  },
  { additionalProperties: false },
);

const ExecuteWorkflowTriggerParameters = Type.Object(
  {
    /** v1 exports carry n8n's own misspelt event name. */
    events: Type.Optional(Type.Literal('worklfow_call')),
    /** v1.1: how the caller's items arrive; `passthrough` (v1's only way) hands them over as they are. */
    inputSource: Type.Enum(['passthrough', 'workflowInputs', 'jsonExample'] as const, {
      default: 'passthrough',
    }),
    workflowInputs: Type.Optional(
      Type.Object({ values: Type.Array(InputField, { maxItems: 100 }) }, { additionalProperties: false }),
    ),
    jsonExample: Type.Optional(Type.String({ maxLength: 100_000 })),
  },
  { additionalProperties: false },
);

/**
 * n8n's Execute Workflow Trigger ("When Executed by Another Workflow", v1, 1.1): where a sub-workflow
 * starts when an Execute Workflow node calls it. With declared inputs (`workflowInputs`, `jsonExample`)
 * each item keeps only the declared fields, as n8n does; `passthrough` keeps items whole.
 */
export const executeWorkflowTriggerNode = defineNode({
  type: 'n8n-nodes-base.executeWorkflowTrigger',
  versions: [1, 1.1],
  schema: ExecuteWorkflowTriggerParameters,
  trigger: true,
  inputs: 0,
  async execute(ctx) {
    const p = await ctx.params(0);
    const items = ctx.items.length > 0 ? ctx.items : [{ json: {} }];
    const fields =
      p.inputSource === 'workflowInputs'
        ? (p.workflowInputs?.values ?? []).map((f) => f.name)
        : p.inputSource === 'jsonExample'
          ? Object.keys(parseExample(p.jsonExample))
          : null;
    if (!fields) return output(items);
    return output(
      items.map((item) => ({ json: Object.fromEntries(fields.map((f) => [f, item.json[f] ?? null])) })),
    );
  },
});

function parseExample(text: string | undefined): Record<string, unknown> {
  try {
    const value = JSON.parse(text ?? '{}') as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
