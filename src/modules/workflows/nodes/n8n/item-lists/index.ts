import { type TSchema, Type } from 'typebox';
import {
  defineNode,
  type NodeExecutionContext,
  NodeOperationError,
  type NodeResult,
  type NodeType,
  output,
} from '../../../engine/node-type.js';
import { checkParameters, withDefaults } from '../../../engine/parameters.js';
import type { Item } from '../../../engine/types.js';
import { aggregateNode } from '../aggregate/index.js';
import { limitNode } from '../limit/index.js';
import { getField, isObject } from '../merge/json.js';
import { removeDuplicateInputItems, removeDuplicatesNode } from '../remove-duplicates/index.js';
import { sortNode } from '../sort/index.js';
import { splitOutNode } from '../split-out/index.js';
import { type SummarizeParams, summarizeItems, summarizeNode } from '../summarize/index.js';

const OPERATIONS = [
  'aggregateItems',
  'concatenateItems',
  'limit',
  'removeDuplicates',
  'sort',
  'splitOutItems',
  'summarize',
] as const;

const any = () => Type.Optional(Type.Unknown());

/**
 * n8n's Item Lists names every operation's parameters at the top level; each is checked against the
 * schema of the node whose logic the operation is (Aggregate, Limit, …) when it runs.
 */
const ItemListsParameters = Type.Object(
  {
    resource: Type.Optional(Type.Literal('itemList')),
    operation: Type.Enum(OPERATIONS, { default: 'splitOutItems' }),
    // Split Out Items
    fieldToSplitOut: any(),
    include: any(),
    fieldsToInclude: any(),
    // Concatenate (Aggregate) Items
    aggregate: any(),
    fieldsToAggregate: any(),
    destinationFieldName: any(),
    fieldsToExclude: any(),
    // Remove Duplicates
    compare: any(),
    fieldsToCompare: any(),
    // Sort
    type: any(),
    sortFieldsUi: any(),
    code: any(),
    // Limit
    maxItems: any(),
    keep: any(),
    // Summarize
    fieldsToSummarize: any(),
    fieldsToSplitBy: any(),
    options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

type Raw = Record<string, unknown>;

/** v1/v2 list fields are `{ fields: [{ fieldName }] }`; v3 and the standalone nodes take text. */
function names(value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const fields = (value as { fields?: Array<{ fieldName?: unknown }> }).fields ?? [];
    return fields.map((f) => String(f.fieldName ?? ''));
  }
  return value;
}

const FIELD_LISTS = new Set(['fieldsToInclude', 'fieldsToExclude', 'fieldsToCompare']);

function pick(p: Raw, keys: string[]): Raw {
  const out: Raw = {};
  for (const k of keys) if (p[k] !== undefined) out[k] = FIELD_LISTS.has(k) ? names(p[k]) : p[k];
  return out;
}

/** Option keys the target node knows; n8n ignores the rest (left from another operation). */
function optionsFor(schema: TSchema, options: unknown): Raw {
  const known = (schema as { properties?: { options?: { properties?: Record<string, unknown> } } }).properties
    ?.options?.properties;
  const out: Raw = {};
  for (const [k, v] of Object.entries((options as Raw | undefined) ?? {}))
    if (!known || k in known) out[k] = v;
  return out;
}

/** The node whose logic an operation is, and its parameters taken from Item Lists'. */
function route(p: Raw): { node: NodeType; params: Raw } | { summarize: true } {
  const options = (node: NodeType) => ({ options: optionsFor(node.schema, p.options) });
  switch (p.operation) {
    case 'aggregateItems':
    case 'concatenateItems':
      return {
        node: aggregateNode,
        params: {
          ...pick(p, [
            'aggregate',
            'fieldsToAggregate',
            'destinationFieldName',
            'include',
            'fieldsToExclude',
            'fieldsToInclude',
          ]),
          ...options(aggregateNode),
        },
      };
    case 'limit':
      return { node: limitNode, params: pick(p, ['maxItems', 'keep']) };
    case 'removeDuplicates':
      return {
        node: removeDuplicatesNode,
        params: {
          ...pick(p, ['compare', 'fieldsToExclude', 'fieldsToCompare']),
          ...options(removeDuplicatesNode),
        },
      };
    case 'sort':
      return {
        node: sortNode,
        params: { ...pick(p, ['type', 'sortFieldsUi', 'code']), ...options(sortNode) },
      };
    case 'summarize':
      return { summarize: true };
    default: {
      const destination = (p.options as Raw | undefined)?.destinationFieldName;
      const params = {
        fieldToSplitOut: '',
        ...pick(p, ['fieldToSplitOut', 'include', 'fieldsToInclude']),
        ...options(splitOutNode),
      };
      if (destination !== undefined) (params.options as Raw).destinationFieldName = destination;
      return { node: splitOutNode, params };
    }
  }
}

function checked(node: NodeType, params: Raw): Raw {
  const problems = checkParameters(node.schema, params, 'parameters', false);
  if (problems.length > 0)
    throw new NodeOperationError(
      `Invalid parameters: ${problems.map((x) => `${x.path} ${x.message}`).join('; ')}`,
      {
        problems,
      },
    );
  return withDefaults(node.schema, params) as Raw;
}

/**
 * n8n's Item Lists (v1–v3.1): split out, aggregate/concatenate, remove duplicates, sort, limit and
 * summarize items. Each operation runs the logic of the node n8n later split it into, called with the
 * operation's parameters (v1/v2's `{ fields: [{ fieldName }] }` lists read as field names).
 */
export const itemListsNode = defineNode({
  type: 'n8n-nodes-base.itemLists',
  versions: [1, 2, 2.1, 2.2, 3, 3.1],
  // n8n's Item Lists (every version) throws; under continueOnFail its engine passes the input through.
  passInputOnFail: true,
  schema: ItemListsParameters,
  async execute(ctx): Promise<NodeResult> {
    const first = (await ctx.params(0)) as Raw;
    const target = route(first);
    if ('summarize' in target) {
      const params = checked(summarizeNode, {
        ...pick(first, ['fieldsToSummarize', 'fieldsToSplitBy']),
        options: {
          ...optionsFor(summarizeNode.schema, first.options),
          // From v2.1 a field no item has is counted as empty, not an error (n8n adds a hint).
          ...((ctx.node.typeVersion ?? 1) >= 2.1 ? { continueIfFieldNotFound: true } : {}),
        },
      }) as SummarizeParams;
      return output(summarizeItems(ctx.items, params, false));
    }
    const cache = new Map<number, Raw>([[0, checked(target.node, target.params)]]);
    const inner: NodeExecutionContext<unknown> = {
      ...ctx,
      params: async (index: number) => {
        const hit = cache.get(index);
        if (hit) return hit;
        const next = route((await ctx.params(index)) as Raw);
        if ('summarize' in next)
          throw new NodeOperationError('The operation must be the same for every item');
        const value = checked(target.node, next.params);
        cache.set(index, value);
        return value;
      },
    };
    if (target.node === removeDuplicatesNode && (ctx.node.typeVersion ?? 1) >= 3.1) {
      const params = (await inner.params(0)) as Parameters<typeof removeDuplicateInputItems>[1];
      return output(removeDuplicateInputItems(ctx.items, params, true, false));
    }
    const version = ctx.node.typeVersion ?? 1;
    if (target.node === splitOutNode && version < 2.2) await scalarRefused(ctx.items, inner, version);
    if (target.node === aggregateNode && version < 2.1) missingAggregateRefused(ctx.items, first);
    return target.node.execute(inner as Parameters<NodeType['execute']>[0]);
  },
});

/**
 * Before v2.2 Item Lists refused to split a field holding a single value (later versions wrap it), and
 * before v2.1 a field the item lacks (later versions output an empty item).
 */
async function scalarRefused(
  items: Item[],
  inner: NodeExecutionContext<unknown>,
  version: number,
): Promise<void> {
  for (let i = 0; i < items.length; i++) {
    const p = (await inner.params(i)) as { fieldToSplitOut: string; options?: Raw };
    const dot = p.options?.disableDotNotation !== true;
    for (const field of p.fieldToSplitOut.split(',').map((f) => f.trim())) {
      const value = getField((items[i] as Item).json, field, dot);
      if (value === undefined && version < 2.1)
        throw new NodeOperationError(`The field '${field}' wasn't found in any input item`);
      if (value !== undefined && !isObject(value) && !Array.isArray(value))
        throw new NodeOperationError(`The provided field '${field}' is not an array or object`);
    }
  }
}

/** Before v2.1 Item Lists refused to aggregate a field no item has (later versions output `[]`). */
function missingAggregateRefused(items: Item[], p: Raw): void {
  if (p.aggregate === 'aggregateAllItemData') return;
  const dot = (p.options as Raw | undefined)?.disableDotNotation !== true;
  const specs = (
    p.fieldsToAggregate as { fieldToAggregate?: Array<{ fieldToAggregate?: unknown }> } | undefined
  )?.fieldToAggregate;
  for (const spec of specs ?? []) {
    const field = String(spec.fieldToAggregate ?? '');
    if (field !== '' && items.every((item) => getField(item.json, field, dot) === undefined))
      throw new NodeOperationError(`The field '${field}' wasn't found in any input item`);
  }
}
