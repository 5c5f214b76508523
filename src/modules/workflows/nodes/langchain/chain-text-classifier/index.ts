import { Type } from 'typebox';
import {
  continuesOnFail,
  defineNode,
  NodeOperationError,
  type NodeResult,
} from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { LANGCHAIN, requiredPart } from '../ai-parts.js';
import { BatchingOption, inBatches, nodeError, objectSchema, structuredCall } from '../structured-output.js';

/** n8n's default system prompt of the Text Classifier. */
export const CLASSIFIER_SYSTEM_PROMPT =
  "Please classify the text provided by the user into one of the following categories: {categories}, and use the provided formatting instructions below. Don't explain, and only output the json.";

const Category = Type.Object(
  {
    category: Type.String({ minLength: 1, maxLength: 500 }),
    description: Type.String({ default: '', maxLength: 10_000 }),
  },
  { additionalProperties: false },
);

const Parameters = Type.Object(
  {
    inputText: Type.String({ default: '', maxLength: 1_000_000 }),
    categories: Type.Object(
      { categories: Type.Optional(Type.Array(Category, { maxItems: 100 })) },
      { additionalProperties: false, default: {} },
    ),
    options: Type.Object(
      {
        multiClass: Type.Optional(Type.Boolean()),
        fallback: Type.Optional(Type.Enum(['discard', 'other'] as const)),
        systemPromptTemplate: Type.Optional(Type.String({ maxLength: 100_000 })),
        enableAutoFixing: Type.Optional(Type.Boolean()),
        batching: BatchingOption,
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** n8n's outputs: one per category, then "Other" when the fallback is `other`. */
function outputCount(params: Record<string, unknown>): number {
  const list = (params.categories as { categories?: unknown } | undefined)?.categories;
  const fallback = (params.options as { fallback?: unknown } | undefined)?.fallback;
  return (Array.isArray(list) ? list.length : 0) + (fallback === 'other' ? 1 : 0);
}

/**
 * n8n's Text Classifier (v1, 1.1): per item, the attached chat model answers one boolean per category
 * (and `fallback` with the "Other" branch) in LangChain's structured format; the item goes, unchanged, to
 * the output of every category marked true (one, unless multi-class), or to "Other". Auto-fixing (one
 * repair call) only when the option is set, as n8n reads it. From v1.1 items run in batches.
 */
export const textClassifierNode = defineNode({
  type: `${LANGCHAIN}.textClassifier`,
  versions: [1, 1.1],
  schema: Parameters,
  aiInputs: ['ai_languageModel'],
  outputs: outputCount,
  async execute(ctx): Promise<NodeResult> {
    const first = await ctx.params(0);
    const categories = first.categories.categories ?? [];
    if (categories.length === 0) throw new NodeOperationError('At least one category must be defined');
    const names = new Set<string>();
    for (const c of categories) {
      if (names.has(c.category))
        throw new NodeOperationError(`The category '${c.category.slice(0, 100)}' is defined twice`);
      names.add(c.category);
    }
    const { options } = first;
    const fallback = options.fallback ?? 'discard';
    const entries: Array<[string, Record<string, unknown>]> = categories.map((c) => [
      c.category,
      {
        type: 'boolean',
        description: `Should be true if the input has category "${c.category}" (description: ${c.description})`,
      },
    ]);
    if (fallback === 'other')
      entries.push([
        'fallback',
        { type: 'boolean', description: 'Should be true if none of the other categories apply' },
      ]);
    // fromEntries defines own keys: a category named `__proto__` stays a property.
    const properties = Object.fromEntries(entries);
    const schema = objectSchema(properties, Object.keys(properties));
    const multiClassPrompt = options.multiClass
      ? 'Categories are not mutually exclusive, and multiple can be true'
      : 'Categories are mutually exclusive, and only one can be true';
    const fallbackPrompt =
      fallback === 'other'
        ? 'If no categories apply, select the "fallback" option.'
        : 'If there is not a very fitting category, select none of the categories.';

    const processItem = async (i: number): Promise<Record<string, unknown>> => {
      const p = i === 0 ? first : await ctx.params(i);
      if (!p.inputText) throw new NodeOperationError(`Text to classify for item ${i} is not defined`);
      const model = await requiredPart(ctx.subNodes('ai_languageModel'), i, 'chatModel', 'Chat Model');
      const template = p.options.systemPromptTemplate ?? CLASSIFIER_SYSTEM_PROMPT;
      return structuredCall(model, {
        systemTemplate: `${template}\n\t{format_instructions}\n\t${multiClassPrompt}\n\t${fallbackPrompt}`,
        values: { categories: categories.map((c) => c.category).join(', ') },
        text: p.inputText,
        schema,
        fix: options.enableAutoFixing === true,
      });
    };

    const outputs: Item[][] = Array.from(
      { length: categories.length + (fallback === 'other' ? 1 : 0) },
      () => [],
    );
    const route = (i: number, answer: Record<string, unknown>) => {
      const item = ctx.items[i] as Item;
      categories.forEach((c, k) => {
        if (answer[c.category] === true) outputs[k]?.push({ ...item, pairedItem: { item: i } });
      });
      if (fallback === 'other' && answer.fallback === true)
        outputs[outputs.length - 1]?.push({ ...item, pairedItem: { item: i } });
    };
    const fail = (i: number, error: unknown) => {
      if (!continuesOnFail(ctx.node)) throw nodeError(error);
      outputs[0]?.push({ json: { error: (error as Error).message }, pairedItem: { item: i } });
    };

    const batchSize = options.batching?.batchSize ?? 5;
    if ((ctx.node.typeVersion ?? 1) >= 1.1 && batchSize > 1) {
      const results = await inBatches(
        ctx.items.length,
        batchSize,
        options.batching?.delayBetweenBatches ?? 0,
        processItem,
      );
      results.forEach((r, i) => {
        if (r.status === 'fulfilled') route(i, r.value);
        else fail(i, r.reason);
      });
    } else {
      for (let i = 0; i < ctx.items.length; i++) {
        try {
          route(i, await processItem(i));
        } catch (error) {
          fail(i, error);
        }
      }
    }
    return { kind: 'output', output: outputs };
  },
});
