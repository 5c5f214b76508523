import { Type } from 'typebox';
import { continuesOnFail, defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { LANGCHAIN, requiredPart } from '../ai-parts.js';
import { parseJsonField, schemaFromExample } from '../output-parser-structured/json-schema.js';
import {
  BatchingOption,
  inBatches,
  nodeError,
  objectSchema,
  structuredCall,
  validatorFor,
} from '../structured-output.js';

/** n8n's default system prompt of the Information Extractor. */
export const EXTRACTOR_SYSTEM_PROMPT = `You are an expert extraction algorithm.
Only extract relevant information from the text.
If you do not know the value of an attribute asked to extract, you may omit the attribute's value.`;

const Attribute = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    type: Type.Enum(['boolean', 'date', 'number', 'string'] as const, { default: 'string' }),
    description: Type.String({ default: '', maxLength: 10_000 }),
    required: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);

const Parameters = Type.Object(
  {
    text: Type.String({ default: '', maxLength: 1_000_000 }),
    schemaType: Type.Enum(['fromAttributes', 'fromJson', 'manual'] as const, { default: 'fromAttributes' }),
    jsonSchemaExample: Type.String({
      default: '{\n\t"state": "California",\n\t"cities": ["Los Angeles", "San Francisco", "San Diego"]\n}',
      maxLength: 100_000,
    }),
    inputSchema: Type.String({
      default:
        '{\n\t"type": "object",\n\t"properties": {\n\t\t"state": {\n\t\t\t"type": "string"\n\t\t},\n\t\t"cities": {\n\t\t\t"type": "array",\n\t\t\t"items": {\n\t\t\t\t"type": "string"\n\t\t\t}\n\t\t}\n\t}\n}',
      maxLength: 100_000,
    }),
    attributes: Type.Object(
      { attributes: Type.Optional(Type.Array(Attribute, { maxItems: 500 })) },
      { additionalProperties: false, default: {} },
    ),
    options: Type.Object(
      {
        systemPromptTemplate: Type.Optional(Type.String({ maxLength: 100_000 })),
        batching: BatchingOption,
      },
      { additionalProperties: false, default: {} },
    ),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

type Attr = { name: string; type: string; description: string; required: boolean };

/** n8n's `makeZodSchemaFromAttributes`, as zod-to-json-schema prints it. */
function attributesSchema(attributes: Attr[]): Record<string, unknown> {
  // fromEntries defines own keys: an attribute named `__proto__` stays a property.
  const properties = Object.fromEntries(
    attributes.map((a) => [
      a.name,
      a.type === 'date'
        ? { type: 'string', format: 'date', description: a.description }
        : { type: a.type, description: a.description },
    ]),
  );
  return objectSchema(
    properties,
    attributes.filter((a) => a.required).map((a) => a.name),
  );
}

/**
 * n8n's Information Extractor (v1–1.2): per item, the text goes to the attached chat model with the
 * system prompt and LangChain's format instructions for the schema (attributes, an example, or a JSON
 * schema); the answer, parsed and checked (one repair call when it does not fit), is `{output}`.
 * From v1.1 items run in batches (n8n's batching options).
 */
export const informationExtractorNode = defineNode({
  type: `${LANGCHAIN}.informationExtractor`,
  versions: [1, 1.1, 1.2],
  schema: Parameters,
  aiInputs: ['ai_languageModel'],
  async execute(ctx) {
    const version = ctx.node.typeVersion ?? 1;
    const first = await ctx.params(0);
    let schema: Record<string, unknown>;
    if (first.schemaType === 'fromAttributes') {
      const attributes = first.attributes.attributes ?? [];
      if (attributes.length === 0) throw new NodeOperationError('At least one attribute must be specified');
      schema = attributesSchema(attributes);
    } else {
      try {
        if (first.schemaType === 'fromJson') {
          const example = schemaFromExample(parseJsonField(first.jsonSchemaExample, 'jsonSchemaExample'));
          // Before v1.2 n8n's generated schema leaves every field optional.
          schema = version >= 1.2 ? example : withoutRequired(example);
        } else {
          schema = parseJsonField(first.inputSchema, 'inputSchema') as Record<string, unknown>;
        }
        if (!schema || typeof schema !== 'object' || Array.isArray(schema))
          throw new Error('the schema must be an object');
        validatorFor(schema);
      } catch (error) {
        throw new NodeOperationError(`Invalid schema: ${(error as Error).message}`);
      }
    }

    const processItem = async (i: number): Promise<Json> => {
      const p = i === 0 ? first : await ctx.params(i);
      if (!p.text?.trim()) throw new NodeOperationError(`Text for item ${i} is not defined`);
      const model = await requiredPart(ctx.subNodes('ai_languageModel'), i, 'chatModel', 'Chat Model');
      return (await structuredCall(model, {
        systemTemplate: `${p.options.systemPromptTemplate ?? EXTRACTOR_SYSTEM_PROMPT}\n{format_instructions}`,
        values: {},
        text: p.text,
        schema,
        fix: true,
      })) as Json;
    };

    const out: Item[] = [];
    const batchSize = first.options.batching?.batchSize ?? 5;
    if (version >= 1.1 && batchSize >= 1) {
      const results = await inBatches(
        ctx.items.length,
        batchSize,
        first.options.batching?.delayBetweenBatches ?? 0,
        processItem,
      );
      results.forEach((r, i) => {
        if (r.status === 'fulfilled') out.push({ json: { output: r.value } });
        else if (continuesOnFail(ctx.node))
          out.push({ json: { error: (r.reason as Error).message }, pairedItem: { item: i } });
        else throw nodeError(r.reason);
      });
    } else {
      for (let i = 0; i < ctx.items.length; i++) {
        try {
          out.push({ json: { output: await processItem(i) } });
        } catch (error) {
          if (!continuesOnFail(ctx.node)) throw nodeError(error);
          out.push({ json: { error: (error as Error).message }, pairedItem: { item: i } });
        }
      }
    }
    return output(out);
  },
});

/** An example's schema with no field required (n8n before v1.2), at every depth. */
function withoutRequired(schema: Record<string, unknown>): Record<string, unknown> {
  const { required: _drop, ...rest } = schema;
  if (rest.properties && typeof rest.properties === 'object')
    rest.properties = Object.fromEntries(
      Object.entries(rest.properties as Record<string, Record<string, unknown>>).map(([k, v]) => [
        k,
        withoutRequired(v),
      ]),
    );
  if (rest.items && typeof rest.items === 'object')
    rest.items = withoutRequired(rest.items as Record<string, unknown>);
  return rest;
}
