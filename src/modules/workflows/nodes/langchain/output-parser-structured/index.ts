import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { LANGCHAIN, type OutputParser } from '../ai-parts.js';
import { lenientSchema } from '../lenient-schema.js';
import { jsonOfText, parseJsonField, schemaFromExample, validatorOf } from './json-schema.js';

const Parameters = Type.Object(
  {
    schemaType: Type.Enum(['fromJson', 'manual'] as const, { default: 'fromJson' }),
    jsonSchemaExample: Type.String({
      default: '{\n\t"state": "California",\n\t"cities": ["Los Angeles", "San Francisco", "San Diego"]\n}',
    }),
    inputSchema: Type.String({ default: '{\n\t"type": "object",\n\t"properties": {}\n}' }),
    /** v1–1.1's schema field. */
    jsonSchema: Type.Optional(Type.String()),
    autoFix: Type.Boolean({ default: false }),
    customizeRetryPrompt: Type.Boolean({ default: false }),
    prompt: Type.Optional(Type.String()),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** n8n's Structured Output Parser: the answer must be JSON meeting a schema (given, or from an example). */
export const outputParserStructuredNode = defineSubNode({
  type: `${LANGCHAIN}.outputParserStructured`,
  versions: [1, 1.1, 1.2, 1.3],
  schema: Parameters,
  subNode: 'ai_outputParser',
  aiInputs: ['ai_languageModel'],
  async supply(ctx, itemIndex): Promise<OutputParser> {
    const p = await ctx.params(itemIndex);
    const version = ctx.node.typeVersion ?? 1;
    let schema: Record<string, unknown>;
    try {
      if (version < 1.2 && p.jsonSchema !== undefined)
        schema = parseJsonField(p.jsonSchema, 'jsonSchema') as Record<string, unknown>;
      else if (p.schemaType === 'manual')
        schema = parseJsonField(p.inputSchema, 'inputSchema') as Record<string, unknown>;
      else schema = schemaFromExample(parseJsonField(p.jsonSchemaExample, 'jsonSchemaExample'));
      if (!schema || typeof schema !== 'object' || Array.isArray(schema))
        throw new Error('the schema must be an object');
      schema = lenientSchema(schema);
      validatorOf(schema);
    } catch (error) {
      throw new NodeOperationError(
        `Invalid schema: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const fixer = p.autoFix ? ctx.subNodes('ai_languageModel')[0] : undefined;
    const parser: OutputParser = {
      kind: 'outputParser',
      schema,
      parse(value) {
        const data = unwrapOutput(
          typeof value === 'string' && schema.type !== 'string' ? jsonOfText(value) : value,
          schema,
        );
        const validate = validatorOf(schema);
        if (!validate(data)) {
          const problems = (validate.errors ?? [])
            .slice(0, 5)
            .map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`);
          throw new Error(`Model output doesn't fit required format: ${problems.join('; ')}`);
        }
        return data;
      },
    };
    if (fixer) {
      const model = (await fixer.supply(itemIndex)) as OutputParser['fixWith'];
      if (model?.kind === 'chatModel') parser.fixWith = model;
      if (p.customizeRetryPrompt && p.prompt) {
        if (!p.prompt.includes('{error}'))
          throw new NodeOperationError('Auto-fixing parser prompt has to contain {error} placeholder');
        parser.fixPrompt = p.prompt;
      }
    }
    return parser;
  },
});

/**
 * n8n's parser asks for its schema wrapped in `{ "output": … }` and answers what is inside (then
 * unwraps a doubly nested `output`): a model that follows those instructions answers the wrapper,
 * which is not part of the user's schema unless that schema has an `output` property of its own.
 */
function unwrapOutput(value: unknown, schema: Record<string, unknown>): unknown {
  const own = schema.properties as Record<string, unknown> | undefined;
  if (own && Object.hasOwn(own, 'output')) return value;
  let v = value;
  for (let depth = 0; depth < 2; depth++) {
    if (!v || typeof v !== 'object' || Array.isArray(v)) break;
    const keys = Object.keys(v);
    if (keys.length !== 1 || keys[0] !== 'output') break;
    v = (v as { output: unknown }).output;
  }
  return v;
}
