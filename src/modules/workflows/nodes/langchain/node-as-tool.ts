import { type TObject, Type } from 'typebox';
import { NodeOperationError, type NodeType } from '../../engine/node-type.js';
import type { Item, Json } from '../../engine/types.js';
import type { AiTool } from './ai-parts.js';
import { checkFromAiArguments, fromAiParameters, fromAiSchema, toolNameOf } from './from-ai.js';

const MAX_ANSWER_CHARS = 100_000;
/** Parameters n8n adds to a node used as a tool; the node itself never reads them. */
const TOOL_PARAMETERS = {
  descriptionType: Type.Optional(Type.Enum(['auto', 'manual'] as const)),
  toolDescription: Type.Optional(Type.String({ maxLength: 10_000 })),
};

/**
 * n8n's `<type>Tool` twin of a node (`n8n-nodes-base.postgresTool`): the same node with the same
 * parameters, attached to an agent as an `ai_tool`. Its arguments are the `$fromAI()` calls in its
 * parameters (none: it takes no argument); when the model calls it, the parameters are resolved over
 * the agent's item with those arguments and the node runs once on that item, its output items (JSON)
 * being the tool's answer. The description is `toolDescription` (n8n's `manual`) or, for `auto`,
 * one built from the node's name and operation (n8n's auto text comes from its UI descriptions).
 */
export function nodeAsTool(node: NodeType, label: string): NodeType {
  const base = node.schema as TObject;
  if (base.type !== 'object' || !base.properties) throw new Error(`${node.type} has no object schema`);
  const schema = Type.Object({ ...base.properties, ...TOOL_PARAMETERS }, { additionalProperties: false });
  return {
    type: `${node.type}Tool`,
    ...(node.versions ? { versions: node.versions } : {}),
    schema,
    ...(node.rawParameters ? { rawParameters: node.rawParameters } : {}),
    ...(node.check ? { check: node.check } : {}),
    inputs: 0,
    subNode: 'ai_tool',
    async execute() {
      throw new NodeOperationError('A tool runs only attached to an AI node');
    },
    async supply(ctx, itemIndex): Promise<AiTool> {
      const parameters = ctx.node.parameters as Record<string, unknown>;
      const { toolDescription, descriptionType, ...own } = parameters;
      let fromAi: ReturnType<typeof fromAiParameters>;
      try {
        fromAi = fromAiParameters(own);
      } catch (err) {
        throw new NodeOperationError((err as Error).message);
      }
      const operation = typeof own.operation === 'string' ? own.operation : '';
      const description =
        descriptionType !== 'auto' && typeof toolDescription === 'string' && toolDescription.trim()
          ? toolDescription
          : `${label}${operation ? `: ${operation}` : ''} (node '${ctx.node.name}')`;
      const item: Item = ctx.items[itemIndex] ?? { json: {} };
      return {
        kind: 'tool',
        name: toolNameOf(ctx.node.name),
        description,
        parameters: fromAiSchema(fromAi),
        async run(args) {
          const values = checkFromAiArguments(fromAi, args);
          const extra = { $fromAI: values };
          const result = await node.execute({
            ...ctx,
            items: [item],
            inputs: [[item]],
            params: () => ctx.paramsFor(item, extra),
            evaluate: (source: string, _index: number, more?: Record<string, unknown>) =>
              ctx.evaluate(source, itemIndex, { ...more, ...extra }),
          } as never);
          if (result.kind !== 'output') throw new NodeOperationError(`${label} did not answer as a tool`);
          const rows: Json[] = result.output.flat().map((i) => i.json);
          const text = JSON.stringify(rows);
          return text.length > MAX_ANSWER_CHARS ? text.slice(0, MAX_ANSWER_CHARS) : text;
        },
      };
    },
  };
}
