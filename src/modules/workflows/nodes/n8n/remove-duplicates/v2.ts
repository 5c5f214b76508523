import { type Static, Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { DedupeHistory, DedupeScope, Item } from '../../../engine/types.js';
import { RemoveDuplicatesParameters, removeDuplicateInputItems } from './index.js';

const v1 = RemoveDuplicatesParameters.properties;

/** n8n's default and the platform's ceiling on the keys one scope remembers. */
const DEFAULT_HISTORY = 10_000;
const MAX_HISTORY = 1_000_000;

const RemoveDuplicatesV2Parameters = Type.Object(
  {
    operation: Type.Enum(
      [
        'removeDuplicateInputItems',
        'removeItemsSeenInPreviousExecutions',
        'clearDeduplicationHistory',
      ] as const,
      { default: 'removeDuplicateInputItems' },
    ),
    compare: v1.compare,
    fieldsToExclude: v1.fieldsToExclude,
    fieldsToCompare: v1.fieldsToCompare,
    logic: Type.Enum(
      [
        'removeItemsWithAlreadySeenKeyValues',
        'removeItemsUpToStoredIncrementalKey',
        'removeItemsUpToStoredDate',
      ] as const,
      { default: 'removeItemsWithAlreadySeenKeyValues' },
    ),
    /** Evaluated per item: the key whose earlier sighting removes the item. */
    dedupeValue: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()], { default: '' }),
    incrementalDedupeValue: Type.Union([Type.Number(), Type.String(), Type.Null()], { default: 0 }),
    dateDedupeValue: Type.Union([Type.String(), Type.Null()], { default: '' }),
    /** n8n offers one way to clear: every stored value of the scope. */
    mode: Type.Literal('cleanDatabase', { default: 'cleanDatabase' }),
    options: Type.Object(
      {
        disableDotNotation: Type.Optional(Type.Boolean()),
        removeOtherFields: Type.Optional(Type.Boolean()),
        scope: Type.Optional(Type.Enum(['node', 'workflow'] as const)),
        historySize: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_HISTORY })),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

type Params = Static<typeof RemoveDuplicatesV2Parameters>;

/**
 * n8n's Remove Duplicates v2: duplicates within the input (as v1.1), items whose key an earlier
 * execution saw (kept in the database per node or per workflow), and clearing that history.
 */
export const removeDuplicatesV2Node = defineNode({
  type: 'n8n-nodes-base.removeDuplicates',
  versions: [2],
  schema: RemoveDuplicatesV2Parameters,
  async execute(ctx) {
    const first = await ctx.params(0);
    if (first.operation === 'removeDuplicateInputItems')
      return output(removeDuplicateInputItems(ctx.items, first, true));
    const history = ctx.deps.dedupe;
    if (!history)
      throw new NodeOperationError('Remove Duplicates needs the workflow service to keep its history');
    const scope: DedupeScope = {
      workflowId: ctx.workflow.id,
      scope: first.options.scope === 'workflow' ? '' : ctx.node.id,
    };
    if (first.operation === 'clearDeduplicationHistory') {
      await history.clear(scope);
      return output(ctx.items);
    }
    const perItem: Params[] = [first];
    for (let i = 1; i < ctx.items.length; i++) perItem.push(await ctx.params(i));
    if (first.logic === 'removeItemsWithAlreadySeenKeyValues')
      return output(await keepUnseen(ctx.items, perItem, history, scope, first.options.historySize));
    return output(await keepAboveLatest(ctx.items, perItem, history, scope, first.logic));
  },
});

/** Groups items by key: every item of a key goes the same way (n8n's item mapping). */
function groupBy(items: Item[], keyOf: (index: number) => string): Map<string, Item[]> {
  const groups = new Map<string, Item[]>();
  items.forEach((item, i) => {
    const key = keyOf(i);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  });
  return groups;
}

const text = (value: unknown) => (value === null || value === undefined ? '' : String(value));

async function keepUnseen(
  items: Item[],
  params: Params[],
  history: DedupeHistory,
  scope: DedupeScope,
  historySize = DEFAULT_HISTORY,
): Promise<Item[]> {
  const groups = groupBy(items, (i) => text(params[i]?.dedupeValue));
  // n8n's rule: refuse a run that could push the history past its size, rather than forget keys.
  if ((await history.count(scope)) + items.length > historySize)
    throw new NodeOperationError(
      'The number of items to be processed exceeds the maximum history size. Please increase the history size or reduce the number of items to be processed.',
    );
  const fresh = await history.recordKeys(scope, [...groups.keys()]);
  return [...groups].filter(([key]) => fresh.has(key)).flatMap(([, group]) => group);
}

async function keepAboveLatest(
  items: Item[],
  params: Params[],
  history: DedupeHistory,
  scope: DedupeScope,
  logic: 'removeItemsUpToStoredIncrementalKey' | 'removeItemsUpToStoredDate',
): Promise<Item[]> {
  const kind = logic === 'removeItemsUpToStoredDate' ? 'date' : 'number';
  const values = params.map((p) =>
    kind === 'date' ? dateOf(p.dateDedupeValue) : numberOf(p.incrementalDedupeValue),
  );
  const stored = await history.latest(scope, kind);
  const kept = items.filter((_, i) => stored === null || (values[i] as number) > stored);
  const highest = Math.max(...values);
  if (Number.isFinite(highest)) await history.raiseLatest(scope, kind, highest);
  return kept;
}

function numberOf(value: unknown): number {
  if (text(value) === '')
    throw new NodeOperationError('The `Value to Dedupe` On is empty. Please provide a value.');
  const n = Number(value);
  if (!Number.isFinite(n))
    throw new NodeOperationError(`The value '${text(value)}' is not a number. Please provide a number.`);
  return n;
}

function dateOf(value: unknown): number {
  const raw = text(value);
  if (raw === '') throw new NodeOperationError('The `Value to Dedupe` On is empty. Please provide a value.');
  const at = Date.parse(raw);
  if (Number.isNaN(at))
    throw new NodeOperationError(`The value '${raw}' is not a valid date. Please provide a valid date.`);
  return at;
}
