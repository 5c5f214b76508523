import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { Type } from 'typebox';
import type { ChatMessage } from '../../../llm/index.js';
import { NodeOperationError } from '../../engine/node-type.js';
import type { ChatModel } from './ai-parts.js';
import { askText, fillTemplate } from './ask.js';

/**
 * What n8n's Information Extractor, Text Classifier and Sentiment Analysis share: LangChain's
 * `StructuredOutputParser` (its format instructions, its lenient JSON reading, its schema check) and
 * `OutputFixingParser` (one repair call through the same model), over the attached chat model.
 */

const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

/** An object schema as zod-to-json-schema writes a `z.object` (what LangChain prints to the model). */
export function objectSchema(
  properties: Record<string, Record<string, unknown>>,
  required: string[],
): Record<string, unknown> {
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
    $schema: DRAFT_07,
  };
}

/** LangChain's `StructuredOutputParser.getFormatInstructions()`, word for word. */
export function formatInstructions(schema: Record<string, unknown>): string {
  return `You must format your output as a JSON value that adheres to a given "JSON Schema" instance.

"JSON Schema" is a declarative language that allows you to annotate and validate JSON documents.

For example, the example "JSON Schema" instance {{"properties": {{"foo": {{"description": "a list of test words", "type": "array", "items": {{"type": "string"}}}}}}, "required": ["foo"]}}
would match an object with one required property, "foo". The "type" property specifies "foo" must be an "array", and the "description" property semantically describes it as "a list of test words". The items within "foo" must be strings.
Thus, the object {{"foo": ["bar", "baz"]}} is a well-formatted instance of this example "JSON Schema". The object {{"properties": {{"foo": ["bar", "baz"]}}}} is not well-formatted.

Your output will be parsed and type-checked according to the provided schema instance, so make sure all fields in your output match the schema exactly and there are no trailing commas!

Here is the JSON Schema instance your output must adhere to. Include the enclosing markdown codeblock:
\`\`\`json
${JSON.stringify(schema)}
\`\`\`
`;
}

/** LangChain's (and n8n's) retry prompt of the output-fixing parser. */
export const NAIVE_FIX_TEMPLATE = `Instructions:
--------------
{instructions}
--------------
Completion:
--------------
{completion}
--------------

Above, the Completion did not satisfy the constraints given in the Instructions.
Error:
--------------
{error}
--------------

Please try again. Please only respond with an answer that satisfies the constraints laid out in the Instructions:`;

/**
 * One Ajv per 500 schemas: Ajv keeps every schema it compiled (by object, and by `$id`), so the set is
 * dropped with its instance. `addUsedSchema: false` keeps a schema's `$id` out of the instance's
 * registry, so two workflows (two accounts) may use the same `$id` for different schemas.
 */
const newAjv = () => {
  const instance = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true, addUsedSchema: false });
  addFormats.default(instance);
  return instance;
};
let ajv = newAjv();
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 500;

/**
 * The check of a schema as zod runs it: `additionalProperties: false` of a `z.object` drops unknown keys
 * rather than failing (they are stripped after the check), the rest as written.
 */
export function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    if (compiled.size >= MAX_COMPILED) {
      compiled.clear();
      ajv = newAjv();
    }
    const { $schema: _drop, ...rest } = schema;
    validate = ajv.compile(
      rest.additionalProperties === false ? { ...rest, additionalProperties: true } : rest,
    );
    compiled.set(key, validate);
  }
  return validate;
}

/** What the model answered that does not parse (LangChain's OutputParserException). */
export class OutputParserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutputParserException';
  }
}

const MAX_QUOTED = 2_000;

/**
 * LangChain's `StructuredOutputParser.parse`: the text between the first pair of code fences (or the whole
 * text), newlines inside strings escaped and the others dropped, read as JSON and checked against the
 * schema; unknown keys of the top object are dropped as zod drops them. Throws n8n's (LangChain's)
 * `Failed to parse. Text: "…". Error: …`.
 */
export function parseStructured(text: string, schema: Record<string, unknown>): Record<string, unknown> {
  let value: unknown;
  try {
    const json = text.includes('```') ? (text.trim().split(/```(?:json)?/)[1] ?? '') : text.trim();
    const escaped = json
      .replace(/"([^"\\]*(\\.[^"\\]*)*)"/g, (_m, inner: string) => `"${inner.replace(/\n/g, '\\n')}"`)
      .replace(/\n/g, '');
    value = JSON.parse(escaped);
  } catch (error) {
    throw parseError(text, String(error));
  }
  const validate = validatorFor(schema);
  if (!validate(value)) {
    const problems = (validate.errors ?? [])
      .slice(0, 5)
      .map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`.trim());
    throw parseError(text, `the answer does not match the schema: ${problems.join('; ')}`);
  }
  const properties = schema.properties as Record<string, unknown> | undefined;
  if (schema.additionalProperties === false && properties && value && typeof value === 'object') {
    // fromEntries defines own keys: a key named `__proto__` stays data.
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).filter(([k]) => Object.hasOwn(properties, k)),
    );
  }
  return value as Record<string, unknown>;
}

function parseError(text: string, why: string): OutputParserError {
  const quoted = text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text;
  return new OutputParserError(`Failed to parse. Text: "${quoted}". Error: ${why}`);
}

/**
 * One structured call: the system message (the node's template with `{format_instructions}` and the
 * other values filled in, as LangChain's SystemMessagePromptTemplate), the text as the user turn, the
 * answer parsed; with `fix`, an answer that does not parse is sent back once with the error
 * (LangChain's OutputFixingParser) and the repaired answer must parse.
 */
export async function structuredCall(
  model: ChatModel,
  run: {
    systemTemplate: string;
    values: Record<string, string>;
    text: string;
    schema: Record<string, unknown>;
    fix: boolean;
  },
): Promise<Record<string, unknown>> {
  const instructions = formatInstructions(run.schema);
  const messages: ChatMessage[] = [
    {
      role: 'system',
      content: fillTemplate(run.systemTemplate, { ...run.values, format_instructions: instructions }),
    },
    { role: 'user', content: run.text },
  ];
  const answer = await askText(model, messages);
  try {
    return parseStructured(answer, run.schema);
  } catch (error) {
    if (!run.fix || !(error instanceof OutputParserError)) throw error;
    const retry = fillTemplate(NAIVE_FIX_TEMPLATE, {
      instructions,
      completion: answer,
      error: error.message,
    });
    const repaired = await askText(model, [{ role: 'user', content: retry }]);
    return parseStructured(repaired, run.schema);
  }
}

/** n8n's batching options (`getBatchingOptionFields`): items per batch and the pause between batches. */
export const BatchingOption = Type.Optional(
  Type.Object(
    {
      batchSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 5 })),
      delayBetweenBatches: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000, default: 0 })),
    },
    { additionalProperties: false },
  ),
);

/** At most this many model calls of one node at once, whatever the batch size. */
const MAX_PARALLEL = 16;

/**
 * n8n's batch processing: items `batchSize` at a time, each batch's items concurrently (at most
 * MAX_PARALLEL calls in flight), a pause between batches; every item's outcome in item order.
 */
export async function inBatches<T>(
  count: number,
  batchSize: number,
  delayMs: number,
  run: (itemIndex: number) => Promise<T>,
): Promise<Array<PromiseSettledResult<T>>> {
  const results: Array<PromiseSettledResult<T>> = [];
  for (let start = 0; start < count; start += batchSize) {
    const end = Math.min(count, start + batchSize);
    for (let wave = start; wave < end; wave += MAX_PARALLEL) {
      const indexes = Array.from({ length: Math.min(MAX_PARALLEL, end - wave) }, (_, k) => wave + k);
      results.push(...(await Promise.allSettled(indexes.map((i) => run(i)))));
    }
    if (end < count && delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  return results;
}

/** An error as the node's own (NodeOperationError keeps its message, others are wrapped). */
export function nodeError(error: unknown): NodeOperationError {
  if (error instanceof NodeOperationError) return error;
  return new NodeOperationError(error instanceof Error ? error.message : String(error));
}
