import { type Static, Type } from 'typebox';
import { generatedUuid } from '../../../engine/display-options.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { ValidationProblem } from '../../../engine/types.js';
import { filterRegexTest } from './regex.js';
import { parseFilterValue } from './values.js';

/**
 * n8n's filter parameter (IF v2, Filter v2, Switch v3 rules): typed conditions joined by a combinator.
 * Semantics follow n8n's executeFilter: values are parsed to the operator's type (strictly, or loosely
 * with conversion), then compared; a value of the wrong type is an error worded as n8n words it.
 */

/** The operations n8n's editor offers per operator type. */
const FILTER_OPERATIONS = {
  any: ['exists', 'notExists'],
  string: [
    'exists',
    'notExists',
    'empty',
    'notEmpty',
    'equals',
    'notEquals',
    'contains',
    'notContains',
    'startsWith',
    'notStartsWith',
    'endsWith',
    'notEndsWith',
    'regex',
    'notRegex',
  ],
  number: ['exists', 'notExists', 'empty', 'notEmpty', 'equals', 'notEquals', 'gt', 'lt', 'gte', 'lte'],
  dateTime: [
    'exists',
    'notExists',
    'empty',
    'notEmpty',
    'equals',
    'notEquals',
    'after',
    'before',
    'afterOrEquals',
    'beforeOrEquals',
  ],
  boolean: ['exists', 'notExists', 'empty', 'notEmpty', 'true', 'false', 'equals', 'notEquals'],
  array: [
    'exists',
    'notExists',
    'empty',
    'notEmpty',
    'contains',
    'notContains',
    'lengthEquals',
    'lengthNotEquals',
    'lengthGt',
    'lengthLt',
    'lengthGte',
    'lengthLte',
  ],
  object: ['exists', 'notExists', 'empty', 'notEmpty'],
} as const;

type FilterType = keyof typeof FILTER_OPERATIONS;
const TYPES = Object.keys(FILTER_OPERATIONS) as FilterType[];
const OPERATIONS = [...new Set(Object.values(FILTER_OPERATIONS).flat())];

const FilterOperator = Type.Object(
  {
    type: Type.Enum(TYPES),
    operation: Type.Enum(OPERATIONS),
    /** The editor marks operations without a right value (exists, empty, true…). */
    singleValue: Type.Optional(Type.Boolean()),
    /** The right value's type where it differs (array contains → any, array length → number). */
    rightType: Type.Optional(Type.Enum(TYPES)),
    /** The editor's label key (`filter.operator.equals`), stored by some n8n versions; not used. */
    name: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const FilterCondition = Type.Object(
  {
    /** n8n's editor gives each condition a UUID; the form does so for a new one. */
    id: Type.Optional(
      Type.String({ title: 'ID', description: 'A new entry gets a fresh UUID', ...generatedUuid }),
    ),
    // No defaults: an expression that resolves to undefined must stay undefined (`exists` is false).
    leftValue: Type.Optional(Type.Unknown()),
    rightValue: Type.Optional(Type.Unknown()),
    operator: FilterOperator,
  },
  { additionalProperties: false },
);

/**
 * What n8n evaluates with. The editor copies the node's "Ignore Case" and "Less Strict Type
 * Validation" switches in here, and n8n's executeFilter reads only these stored values.
 */
const FilterOptions = Type.Object(
  {
    caseSensitive: Type.Optional(Type.Boolean()),
    /** The editor's placeholder for a new condition's left value; n8n does not evaluate it either. */
    leftValue: Type.Optional(Type.Unknown()),
    typeValidation: Type.Optional(Type.Enum(['strict', 'loose'] as const)),
    version: Type.Optional(Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3)])),
  },
  { additionalProperties: false },
);

export const FilterValue = Type.Object(
  {
    options: Type.Optional(FilterOptions),
    conditions: Type.Array(FilterCondition, { default: [] }),
    combinator: Type.Enum(['and', 'or'] as const, { default: 'and' }),
  },
  { additionalProperties: false },
);
export type FilterValueT = Static<typeof FilterValue>;
type Condition = FilterValueT['conditions'][number];

/** The node-level switches, used only when an (imported, hand-written) filter has no `options`. */
export interface FilterFallback {
  ignoreCase?: boolean;
  looseTypeValidation?: boolean;
}

/** Save-time check: each operation must be one of its operator type's. */
export function filterProblems(value: unknown, path: string): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const conditions = (value as { conditions?: unknown })?.conditions;
  if (!Array.isArray(conditions)) return problems;
  conditions.forEach((c, i) => {
    const op = (c as { operator?: { type?: unknown; operation?: unknown } })?.operator;
    if (typeof op?.type !== 'string' || typeof op.operation !== 'string') return;
    const allowed = FILTER_OPERATIONS[op.type as FilterType] as readonly string[] | undefined;
    if (allowed && !allowed.includes(op.operation)) {
      problems.push({
        path: `${path}.conditions[${i}].operator.operation`,
        message: `'${op.operation}' is not an operation of type '${op.type}' (expected one of: ${allowed.join(', ')})`,
      });
    }
  });
  return problems;
}

/**
 * Evaluates a (resolved) filter for one item: all (`and`) or any (`or`) condition holds, stopping at
 * the first that decides (as `every`/`some`). Async: a regex condition may run on a worker thread.
 */
export async function evaluateFilter(
  filter: FilterValueT,
  itemIndex: number,
  fallback: FilterFallback = {},
): Promise<boolean> {
  const stored = filter.options;
  const caseSensitive = stored ? stored.caseSensitive === true : fallback.ignoreCase !== true;
  const strict = stored ? stored.typeValidation === 'strict' : fallback.looseTypeValidation !== true;
  const version = stored?.version ?? 1;
  const any = filter.combinator === 'or';
  for (const [index, c] of filter.conditions.entries()) {
    const holds = await evaluateCondition(c, { caseSensitive, strict, version, index, itemIndex });
    if (holds === any) return any;
  }
  return !any;
}

interface ConditionContext {
  caseSensitive: boolean;
  strict: boolean;
  version: number;
  /** For messages: `[condition 0, item 3]`. */
  index: number;
  itemIndex: number;
}

const article = (noun: string) => `${'aeiou'.includes(noun.charAt(0)) ? 'an' : 'a'} ${noun}`;

function typeError(c: Condition, ctx: ConditionContext, which: 'left' | 'right'): NodeOperationError {
  const { operator } = c;
  const type = which === 'left' ? operator.type : (operator.rightType ?? rightTypeOf(operator));
  const raw = which === 'left' ? c.leftValue : c.rightValue;
  const fromType = (typeof raw).toLocaleLowerCase();
  const suffix = `[condition ${ctx.index}, item ${ctx.itemIndex}]`;
  const message = ctx.strict
    ? `Wrong type: '${String(raw)}' is ${article(fromType)} but was expecting ${article(type)} ${suffix}`
    : `Conversion error: the ${fromType} '${String(raw)}' can't be converted to ${article(type)} ${suffix}`;
  return new NodeOperationError(message, { description: typeDescription(type, ctx.strict, which) });
}

function typeDescription(type: string, strict: boolean, which: 'left' | 'right'): string {
  const conversion = { string: '.toString()', number: '.toNumber()', boolean: '.toBoolean()' }[type];
  if (strict && conversion) {
    const position = which === 'left' ? 'first' : 'second';
    return `Try either: enabling 'Convert types where required', or converting the ${position} field to ${article(type)} by adding ${conversion}`;
  }
  return strict
    ? "Try changing the type of comparison. Alternatively you can enable 'Convert types where required'."
    : 'Try changing the type of the comparison.';
}

/** n8n's editor stores these right types; exports from older editors may lack them. */
function rightTypeOf(operator: Condition['operator']): FilterType {
  if (operator.type === 'array') return operator.operation.startsWith('length') ? 'number' : 'any';
  return operator.type;
}

function evaluateCondition(c: Condition, ctx: ConditionContext): boolean | Promise<boolean> {
  const { operator } = c;
  const rightType = operator.rightType ?? rightTypeOf(operator);
  const left = parseFilterValue(c.leftValue, operator.type, ctx.strict, ctx.version);
  const right = parseFilterValue(c.rightValue, rightType, ctx.strict, ctx.version);
  const rightValid = right.valid || operator.singleValue === true;
  if (!left.valid && !rightValid && typeof c.leftValue === typeof c.rightValue) {
    throw new NodeOperationError(
      `Comparison type expects ${article(operator.type)} but both fields are ${article(typeof c.leftValue)}`,
      { description: typeDescription(operator.type, ctx.strict, 'left') },
    );
  }
  if (!left.valid) throw typeError(c, ctx, 'left');
  if (!rightValid) throw typeError(c, ctx, 'right');
  return compare(operator, left.value, right.valid ? right.value : undefined, ctx);
}

function compare(
  operator: Condition['operator'],
  l: unknown,
  r: unknown,
  ctx: ConditionContext,
): boolean | Promise<boolean> {
  const exists = l !== undefined && l !== null && !Number.isNaN(l);
  const op = operator.operation;
  if (op === 'exists') return exists;
  if (op === 'notExists') return !exists;
  switch (operator.type) {
    case 'string':
      return compareStrings(op, l, r, ctx);
    case 'number':
      return compareOrdered(op, exists, l as number, r as number);
    case 'dateTime': {
      if (op === 'empty') return !exists;
      if (op === 'notEmpty') return exists;
      if (!(l instanceof Date) || !(r instanceof Date)) return false;
      return compareOrdered(op, exists, l.getTime(), r.getTime());
    }
    case 'boolean':
      if (op === 'true') return l === true;
      if (op === 'false') return !l;
      return compareOrdered(op, exists, l as boolean, r as boolean);
    case 'array':
      return compareArray(op, (l ?? []) as unknown[], r, !ctx.caseSensitive);
    case 'object':
      if (op === 'empty') return !l || Object.keys(l).length === 0;
      if (op === 'notEmpty') return !!l && Object.keys(l).length !== 0;
      break;
    case 'any':
      break;
  }
  throw new NodeOperationError(`Unknown filter operator "${operator.type}:${op}"`);
}

function compareStrings(
  op: string,
  l: unknown,
  r: unknown,
  ctx: ConditionContext,
): boolean | Promise<boolean> {
  const regex = op === 'regex' || op === 'notRegex';
  const fold = (v: unknown) =>
    !ctx.caseSensitive && !regex && typeof v === 'string' ? v.toLocaleLowerCase() : v;
  const left = (fold(l) ?? '') as string;
  const right = (fold(r) ?? '') as string;
  switch (op) {
    case 'empty':
      return left.length === 0;
    case 'notEmpty':
      return left.length !== 0;
    case 'equals':
      return left === right;
    case 'notEquals':
      return left !== right;
    case 'contains':
      return left.includes(right);
    case 'notContains':
      return !left.includes(right);
    case 'startsWith':
      return left.startsWith(right);
    case 'notStartsWith':
      return !left.startsWith(right);
    case 'endsWith':
      return left.endsWith(right);
    case 'notEndsWith':
      return !left.endsWith(right);
    case 'regex':
      return filterRegexTest(right, left, !ctx.caseSensitive, ctx);
    case 'notRegex':
      return filterRegexTest(right, left, !ctx.caseSensitive, ctx).then((matched) => !matched);
  }
  throw new NodeOperationError(`Unknown filter operator "string:${op}"`);
}

/** Equality and order for numbers, millis and booleans, plus number emptiness (= not exists). */
function compareOrdered<T extends number | boolean>(op: string, exists: boolean, l: T, r: T): boolean {
  switch (op) {
    case 'empty':
      return !exists;
    case 'notEmpty':
      return exists;
    case 'equals':
      return l === r;
    case 'notEquals':
      return l !== r;
    case 'gt':
    case 'after':
      return l > r;
    case 'lt':
    case 'before':
      return l < r;
    case 'gte':
    case 'afterOrEquals':
      return l >= r;
    case 'lte':
    case 'beforeOrEquals':
      return l <= r;
  }
  throw new NodeOperationError(`Unknown filter operation "${op}"`);
}

function compareArray(op: string, left: unknown[], right: unknown, ignoreCase: boolean): boolean {
  const n = right as number;
  switch (op) {
    case 'contains':
      return arrayContains(left, right, ignoreCase);
    case 'notContains':
      return !arrayContains(left, right, ignoreCase);
    case 'lengthEquals':
      return left.length === n;
    case 'lengthNotEquals':
      return left.length !== n;
    case 'lengthGt':
      return left.length > n;
    case 'lengthLt':
      return left.length < n;
    case 'lengthGte':
      return left.length >= n;
    case 'lengthLte':
      return left.length <= n;
    case 'empty':
      return left.length === 0;
    case 'notEmpty':
      return left.length !== 0;
  }
  throw new NodeOperationError(`Unknown filter operator "array:${op}"`);
}

/** Element equality as n8n has it: SameValueZero, or case-folded for strings when ignoring case. */
function arrayContains(array: unknown[], value: unknown, ignoreCase: boolean): boolean {
  if (ignoreCase && typeof value === 'string') {
    const wanted = value.toLocaleLowerCase();
    return array.some((item) => typeof item === 'string' && item.toLocaleLowerCase() === wanted);
  }
  return array.includes(value);
}
