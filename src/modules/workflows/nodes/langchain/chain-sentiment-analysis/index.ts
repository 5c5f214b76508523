import { Type } from 'typebox';
import { pairedTo } from '../../../engine/item-pairing.js';
import {
  continuesOnFail,
  defineNode,
  NodeOperationError,
  type NodeResult,
} from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { LANGCHAIN, requiredPart } from '../ai-parts.js';
import { BatchingOption, inBatches, nodeError, objectSchema, structuredCall } from '../structured-output.js';

/** n8n's default system prompt of Sentiment Analysis. */
export const SENTIMENT_SYSTEM_PROMPT =
  'You are highly intelligent and accurate sentiment analyzer. Analyze the sentiment of the provided text. Categorize it into one of the following: {categories}. Use the provided formatting instructions. Only output the JSON.';

const DEFAULT_CATEGORIES = 'Positive, Neutral, Negative';
const PARSE_FAILED = 'Error during parsing of LLM output, please check your LLM model and configuration';

const Parameters = Type.Object(
  {
    inputText: Type.String({ default: '', maxLength: 1_000_000 }),
    detailedResultsNotice: Type.Optional(Type.String()),
    options: Type.Object(
      {
        categories: Type.Optional(Type.String({ maxLength: 10_000 })),
        systemPromptTemplate: Type.Optional(Type.String({ maxLength: 100_000 })),
        includeDetailedResults: Type.Optional(Type.Boolean()),
        enableAutoFixing: Type.Optional(Type.Boolean()),
        batching: BatchingOption,
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

const MAX_CATEGORIES = 100;

function categoriesOf(text: string): string[] {
  return text
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
}

/** n8n's outputs: one per sentiment category (the option's comma-separated list). */
function outputCount(params: Record<string, unknown>): number {
  const categories = (params.options as { categories?: unknown } | undefined)?.categories;
  return categoriesOf(typeof categories === 'string' ? categories : DEFAULT_CATEGORIES).length;
}

/**
 * n8n's Sentiment Analysis (v1, 1.1): per item, the attached chat model names one of the categories
 * (with a strength and a confidence from 0 to 1) in LangChain's structured format; the item goes to that
 * category's output with `sentimentAnalysis: {category}` added (and `strength`, `confidence` with
 * `includeDetailedResults`). An answer that does not parse fails the item with n8n's message; auto-fixing
 * (one repair call) only when the option is set. From v1.1 items run in batches.
 */
export const sentimentAnalysisNode = defineNode({
  type: `${LANGCHAIN}.sentimentAnalysis`,
  versions: [1, 1.1],
  schema: Parameters,
  aiInputs: ['ai_languageModel'],
  outputs: outputCount,
  async execute(ctx): Promise<NodeResult> {
    const outputs: Item[][] = Array.from({ length: outputCount(ctx.node.parameters) }, () => []);

    const processItem = async (i: number): Promise<{ index: number; item: Item } | null> => {
      const p = await ctx.params(i);
      const listed = p.options.categories ?? DEFAULT_CATEGORIES;
      const categories = categoriesOf(listed);
      if (categories.length === 0) throw new NodeOperationError('No sentiment categories provided');
      if (categories.length > MAX_CATEGORIES)
        throw new NodeOperationError(`At most ${MAX_CATEGORIES} sentiment categories`);
      const schema = objectSchema(
        {
          sentiment: { type: 'string', enum: categories },
          strength: {
            type: 'number',
            minimum: 0,
            maximum: 1,
            description: 'Strength score for sentiment in relation to the category',
          },
          confidence: { type: 'number', minimum: 0, maximum: 1 },
        },
        ['sentiment', 'strength', 'confidence'],
      );
      const model = await requiredPart(ctx.subNodes('ai_languageModel'), i, 'chatModel', 'Chat Model');
      let answer: Record<string, unknown>;
      try {
        answer = await structuredCall(model, {
          systemTemplate: `${p.options.systemPromptTemplate ?? SENTIMENT_SYSTEM_PROMPT}\n\t\t\t{format_instructions}`,
          values: { categories: listed },
          text: p.inputText,
          schema,
          fix: p.options.enableAutoFixing === true,
        });
      } catch (error) {
        // n8n's one message for any failure of the call; the cause goes in the description.
        throw new NodeOperationError(PARSE_FAILED, { description: (error as Error).message.slice(0, 2_000) });
      }
      const sentiment = String(answer.sentiment);
      const index = categories.findIndex((c) => c.toLowerCase() === sentiment.toLowerCase());
      if (index === -1) return null;
      const sentimentAnalysis: Record<string, Json> = { category: sentiment };
      if (p.options.includeDetailedResults) {
        sentimentAnalysis.strength = answer.strength as number;
        sentimentAnalysis.confidence = answer.confidence as number;
      }
      const item = ctx.items[i] as Item;
      // Its own pairing, as n8n's: one output holds some of the items, so position says nothing.
      const json = { ...item.json, sentimentAnalysis };
      return { index, item: pairedTo(json, i, item.binary ? { binary: item.binary } : {}) };
    };
    const place = (result: { index: number; item: Item } | null) => {
      if (!result) return;
      // A category list that differs per item (an expression) may name an output the node lacks.
      while (outputs.length <= result.index) outputs.push([]);
      outputs[result.index]?.push(result.item);
    };
    const fail = (i: number, error: unknown) => {
      if (!continuesOnFail(ctx.node)) throw nodeError(error);
      if (outputs.length === 0) outputs.push([]);
      outputs[0]?.push({ json: { error: (error as Error).message }, pairedItem: { item: i } });
    };

    const first = ctx.items.length > 0 ? await ctx.params(0) : undefined;
    const batchSize = first?.options.batching?.batchSize ?? 5;
    if ((ctx.node.typeVersion ?? 1) >= 1.1 && batchSize > 1) {
      const results = await inBatches(
        ctx.items.length,
        batchSize,
        first?.options.batching?.delayBetweenBatches ?? 0,
        processItem,
      );
      results.forEach((r, i) => {
        if (r.status === 'fulfilled') place(r.value);
        else fail(i, r.reason);
      });
    } else {
      for (let i = 0; i < ctx.items.length; i++) {
        try {
          place(await processItem(i));
        } catch (error) {
          fail(i, error);
        }
      }
    }
    return { kind: 'output', output: outputs };
  },
});
