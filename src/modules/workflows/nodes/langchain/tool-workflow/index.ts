import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { workflowIdOf, workflowJsonProblems } from '../../n8n/execute-workflow/workflow-ref.js';
import { type AiTool, LANGCHAIN } from '../ai-parts.js';
import { checkFromAiArguments, fromAiParameters, fromAiSchema, toolNameOf } from '../from-ai.js';

const Field = Type.Object(
  {
    name: Type.String({ maxLength: 200 }),
    type: Type.Optional(
      Type.Enum(['stringValue', 'numberValue', 'booleanValue', 'arrayValue', 'objectValue'] as const),
    ),
    stringValue: Type.Optional(Type.Unknown()),
    numberValue: Type.Optional(Type.Unknown()),
    booleanValue: Type.Optional(Type.Unknown()),
    arrayValue: Type.Optional(Type.Unknown()),
    objectValue: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

const Parameters = Type.Object(
  {
    name: Type.String({ default: '', maxLength: 64 }),
    description: Type.String({ default: '', maxLength: 10_000 }),
    source: Type.Enum(['database', 'parameter'] as const, { default: 'database' }),
    workflowId: Type.Optional(Type.Unknown()),
    /** `source: 'parameter'`: the callee's workflow JSON (text, as n8n's editor stores it, or an object). */
    workflowJson: Type.Optional(Type.Unknown()),
    /** v1.x: extra fields of the item the sub-workflow gets. */
    fields: Type.Object({ values: Type.Optional(Type.Array(Field, { maxItems: 100 })) }, { default: {} }),
    responsePropertyName: Type.String({ default: 'response', maxLength: 200 }),
    specifyInputSchema: Type.Boolean({ default: false }),
    schemaType: Type.Enum(['fromJson', 'manual'] as const, { default: 'fromJson' }),
    jsonSchemaExample: Type.Optional(Type.String({ maxLength: 100_000 })),
    inputSchema: Type.Optional(Type.String({ maxLength: 100_000 })),
    /** v2+: the callee's declared inputs, mapped (values may be `$fromAI()`). */
    workflowInputs: Type.Optional(
      Type.Object(
        {
          mappingMode: Type.Optional(Type.String()),
          value: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
          matchingColumns: Type.Optional(Type.Array(Type.String())),
          schema: Type.Optional(Type.Array(Type.Unknown())),
          attemptToConvertTypes: Type.Optional(Type.Boolean()),
          convertFieldsToString: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const QUERY_SCHEMA = {
  type: 'object',
  properties: { query: { type: 'string', description: 'The input for the workflow' } },
  required: ['query'],
};

/** Most characters of a sub-workflow's answer the model reads. */
const MAX_ANSWER_CHARS = 100_000;

/**
 * n8n's Call n8n Workflow Tool: a saved workflow of the account run as a tool, waited for, on the same
 * sub-workflow path as Execute Workflow (its node runs count against the caller's bound). v1.x sends
 * `{query, …fields}` and answers the first item's `responsePropertyName`; v2 sends its mapped inputs
 * (`$fromAI()` values checked against their types) and answers the first item's JSON.
 */
export const toolWorkflowNode = defineSubNode({
  type: `${LANGCHAIN}.toolWorkflow`,
  versions: [1, 1.1, 1.2, 1.3, 2, 2.1, 2.2],
  schema: Parameters,
  // The callee's JSON is taken as saved: its own nodes' expressions are the callee's, not this node's.
  rawParameters: ['workflowJson'],
  subNode: 'ai_tool',
  check(params) {
    return params.source === 'parameter' ? workflowJsonProblems(params.workflowJson) : [];
  },
  async supply(ctx, itemIndex): Promise<AiTool> {
    const call = ctx.deps.subWorkflow;
    if (!call) throw new NodeOperationError('Sub-workflows need the workflow service');
    // `$fromAI()` answers nothing until the model calls the tool (then the parameters resolve again).
    const p = await ctx.paramsFor(ctx.items[itemIndex] ?? { json: {} }, { $fromAI: {} });
    const version = ctx.node.typeVersion ?? 1;
    const v2 = version >= 2;
    const fromAi = v2 ? fromAiParameters(ctx.node.parameters.workflowInputs ?? {}) : [];
    // A v2 tool without `$fromAI()` is LangChain's DynamicTool in n8n (one optional text, `input`).
    const schema = v2
      ? fromAi.length > 0
        ? fromAiSchema(fromAi)
        : TEXT_INPUT_SCHEMA
      : p.specifyInputSchema
        ? inputSchemaOf(p)
        : QUERY_SCHEMA;
    // n8n names the tool by its `name` parameter before v1.3 and again at v2 and v2.1 (ToolWorkflowV2:
    // `typeVersion <= 2.1`), else after the node.
    const named = (version < 1.3 || (version >= 2 && version <= 2.1)) && p.name;
    const name = toolNameOf(named ? p.name : ctx.node.name);
    // v2 answers the callee's first item; from v2.1 all its items (n8n's `returnAllItems`).
    const allItems = version > 2;
    const runWorkflow = async (item: Item, id: string): Promise<Item[]> => {
      const before = ctx.nodeRuns.used();
      const done = await call({
        workflowId: id,
        ...(p.source === 'parameter' ? { workflowJson: p.workflowJson } : {}),
        items: [item],
        wait: true,
        parentExecutionId: ctx.execution.id,
        nodeRunsBefore: before,
      });
      ctx.nodeRuns.add(done.nodeRuns - before);
      return done.items;
    };
    return {
      kind: 'tool',
      name,
      description: p.description,
      parameters: schema,
      async run(args) {
        let item: Item;
        let id = workflowIdOf(p.workflowId) ?? '';
        if (v2) {
          const values = checkFromAiArguments(fromAi, args);
          const resolved = await ctx.paramsFor({ json: values as Record<string, Json> }, { $fromAI: values });
          id = workflowIdOf(resolved.workflowId) ?? id;
          item = { json: (resolved.workflowInputs?.value ?? {}) as Record<string, Json> };
        } else {
          let base: Record<string, Json>;
          if (p.specifyInputSchema) base = args as Record<string, Json>;
          else if (typeof args.query === 'string') base = { query: args.query };
          else throw new Error("the argument 'query' must be text");
          item = { json: { ...base, ...fieldsOf(p.fields.values ?? []) } };
        }
        if (!id && p.source !== 'parameter') throw new NodeOperationError('The workflow to call has no id');
        const items = await runWorkflow(item, id);
        const first = items[0]?.json;
        if (v2 && first === undefined) throw new Error('The workflow did not return a response');
        if (allItems)
          return limit(
            JSON.stringify(
              items.map((i) => i.json),
              null,
              2,
            ),
          );
        if (v2) return limit(JSON.stringify(first, null, 2));
        const response = first?.[p.responsePropertyName];
        if (response === undefined)
          throw new Error(
            `The workflow did not return a response (no '${p.responsePropertyName}' in its output)`,
          );
        return limit(typeof response === 'string' ? response : JSON.stringify(response));
      },
    };
  },
});

const TEXT_INPUT_SCHEMA = { type: 'object', properties: { input: { type: 'string' } } };

const limit = (text: string) => (text.length > MAX_ANSWER_CHARS ? text.slice(0, MAX_ANSWER_CHARS) : text);

function fieldsOf(values: Array<Record<string, unknown>>): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const f of values) {
    const type = typeof f.type === 'string' ? f.type : 'stringValue';
    let v = f[type];
    if ((type === 'arrayValue' || type === 'objectValue') && typeof v === 'string') {
      try {
        v = JSON.parse(v);
      } catch {
        throw new NodeOperationError(`The field '${String(f.name)}' is not JSON`);
      }
    }
    if (type === 'numberValue') v = Number(v);
    if (type === 'booleanValue') v = v === true || v === 'true';
    out[String(f.name)] = (v ?? null) as Json;
  }
  return out;
}

function inputSchemaOf(p: { schemaType: string; jsonSchemaExample?: string; inputSchema?: string }) {
  const text = p.schemaType === 'manual' ? p.inputSchema : p.jsonSchemaExample;
  let value: unknown;
  try {
    value = JSON.parse(text ?? '');
  } catch {
    throw new NodeOperationError("The tool's input schema is not JSON");
  }
  if (p.schemaType === 'manual') {
    if ((value as { type?: unknown } | null)?.type !== 'object')
      throw new NodeOperationError("The tool's input schema must be a JSON schema of type object");
    return value as Record<string, unknown>;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new NodeOperationError("The tool's JSON example must be an object");
  const properties = Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      {
        type: Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v === 'object' ? 'object' : typeof v,
      },
    ]),
  );
  return { type: 'object', properties, required: Object.keys(properties) };
}
