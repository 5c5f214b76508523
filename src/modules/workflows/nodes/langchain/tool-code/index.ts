import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { type AiTool, LANGCHAIN } from '../ai-parts.js';
import { toolNameOf } from '../from-ai.js';

const Parameters = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 64 })),
    description: Type.String({ default: '', maxLength: 10_000 }),
    language: Type.Enum(['javaScript', 'python'] as const, { default: 'javaScript' }),
    jsCode: Type.String({ default: '', maxLength: 1_000_000 }),
    pythonCode: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    specifyInputSchema: Type.Boolean({ default: false }),
    schemaType: Type.Enum(['fromJson', 'manual'] as const, { default: 'fromJson' }),
    jsonSchemaExample: Type.Optional(Type.String({ maxLength: 100_000 })),
    inputSchema: Type.Optional(Type.String({ maxLength: 100_000 })),
    notice: Type.Optional(Type.String()),
    noticeTemplateExample: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const QUERY_SCHEMA = {
  type: 'object',
  properties: { query: { type: 'string', description: 'The input of the tool' } },
  required: ['query'],
};

/**
 * n8n's Code tool: JavaScript the model calls, in the same sandbox as the Code node (time and memory
 * bounded). Its input is `query` (a text), or the object of its input schema; what the code returns is
 * the tool's result (text, or JSON of anything else). Python is not run here.
 */
export const toolCodeNode = defineSubNode({
  type: `${LANGCHAIN}.toolCode`,
  versions: [1, 1.1, 1.2, 1.3],
  schema: Parameters,
  subNode: 'ai_tool',
  async supply(ctx, itemIndex): Promise<AiTool> {
    const p = await ctx.params(itemIndex);
    if (p.language !== 'javaScript')
      throw new NodeOperationError('Python in the Code tool is not supported here');
    const schema = p.specifyInputSchema ? schemaOf(p) : QUERY_SCHEMA;
    const name = (ctx.node.typeVersion ?? 1) >= 1.1 && p.name ? p.name : toolNameOf(ctx.node.name);
    return {
      kind: 'tool',
      name,
      description: p.description,
      parameters: schema,
      async run(args) {
        const query = p.specifyInputSchema ? args : args.query;
        if (!p.specifyInputSchema && typeof query !== 'string')
          throw new Error("the argument 'query' must be text");
        // The arguments enter as a JSON literal: data, never spliced code.
        const code = `const query = ${JSON.stringify(query)};\nconst __answer = await (async () => {\n${p.jsCode}\n})();\nreturn [{ json: { answer: __answer === undefined ? null : __answer } }];`;
        const run = await ctx.runCode(code, 'runOnceForAllItems');
        const answer = run.items[0]?.json.answer;
        return typeof answer === 'string' ? answer : JSON.stringify(answer ?? null);
      },
    };
  },
});

function schemaOf(p: {
  schemaType: string;
  jsonSchemaExample?: string;
  inputSchema?: string;
}): Record<string, unknown> {
  const text = p.schemaType === 'manual' ? p.inputSchema : p.jsonSchemaExample;
  let value: unknown;
  try {
    value = JSON.parse(text ?? '');
  } catch {
    throw new NodeOperationError(
      `The tool's ${p.schemaType === 'manual' ? 'input schema' : 'JSON example'} is not JSON`,
    );
  }
  if (p.schemaType === 'manual') {
    if (!value || typeof value !== 'object' || (value as { type?: unknown }).type !== 'object')
      throw new NodeOperationError("The tool's input schema must be a JSON schema of type object");
    return value as Record<string, unknown>;
  }
  return exampleSchema(value, 0);
}

/** A JSON schema from an example (n8n's generateSchemaFromExample): every property required. */
function exampleSchema(value: unknown, depth: number): Record<string, unknown> {
  if (depth > 20) return {};
  if (Array.isArray(value))
    return { type: 'array', items: value.length ? exampleSchema(value[0], depth + 1) : {} };
  if (value === null) return { type: 'null' };
  if (typeof value === 'object') {
    const properties: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) properties[k] = exampleSchema(v, depth + 1);
    return { type: 'object', properties, required: Object.keys(properties) };
  }
  return { type: typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'boolean' : 'string' };
}
