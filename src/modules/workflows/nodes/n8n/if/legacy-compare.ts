import { Type } from 'typebox';
import { parseUserRegex, UserRegexError, userRegexTest } from '../../../../../core/regex/user-regex.js';
import { NodeOperationError } from '../../../engine/node-type.js';

/**
 * The comparisons of n8n's first-generation conditions (IF v1, Filter v1, Switch v1–v2): a value 1, an
 * operation, a value 2, per data type. They are n8n's, loose JavaScript included (`(a || 0) > (b || 0)`,
 * `===` for equality, a dateTime compared as milliseconds), so an imported workflow routes as it did.
 */
export const LEGACY_OPERATIONS = {
  boolean: ['equal', 'notEqual'],
  dateTime: ['after', 'before'],
  number: ['smaller', 'smallerEqual', 'equal', 'notEqual', 'larger', 'largerEqual', 'isEmpty', 'isNotEmpty'],
  string: [
    'contains',
    'notContains',
    'endsWith',
    'notEndsWith',
    'equal',
    'notEqual',
    'regex',
    'notRegex',
    'startsWith',
    'notStartsWith',
    'isEmpty',
    'isNotEmpty',
  ],
} as const;

export type LegacyDataType = keyof typeof LEGACY_OPERATIONS;
export const LEGACY_DATA_TYPES = Object.keys(LEGACY_OPERATIONS) as LegacyDataType[];

/** One condition of a type (n8n's defaults: boolean/string `equal`, number `smaller`, dateTime `after`). */
function legacyCondition(type: LegacyDataType) {
  const defaults = { boolean: 'equal', dateTime: 'after', number: 'smaller', string: 'equal' } as const;
  return Type.Object(
    {
      value1: Type.Optional(Type.Unknown()),
      operation: Type.Enum([...LEGACY_OPERATIONS[type]] as string[], { default: defaults[type] }),
      value2: Type.Optional(Type.Unknown()),
    },
    { additionalProperties: false },
  );
}

/** n8n's `conditions` fixed collection: one list per data type, checked in this order. */
export const LegacyConditions = Type.Object(
  {
    boolean: Type.Optional(Type.Array(legacyCondition('boolean'), { maxItems: 100 })),
    dateTime: Type.Optional(Type.Array(legacyCondition('dateTime'), { maxItems: 100 })),
    number: Type.Optional(Type.Array(legacyCondition('number'), { maxItems: 100 })),
    string: Type.Optional(Type.Array(legacyCondition('string'), { maxItems: 100 })),
  },
  { additionalProperties: false, default: {} },
);

type Conditions = Partial<
  Record<LegacyDataType, Array<{ value1?: unknown; operation: string; value2?: unknown }>>
>;

/** n8n's value-to-milliseconds for dateTime comparisons; an unreadable value fails the node. */
export function legacyDateTime(value: unknown): number {
  let ms: number | undefined;
  if (typeof value === 'string') ms = new Date(value).getTime();
  else if (typeof value === 'number') ms = value;
  if (ms === undefined || Number.isNaN(ms))
    throw new NodeOperationError(`The value "${String(value)}" is not a valid DateTime.`);
  return ms;
}

// n8n compares with JavaScript's loose relational operators on whatever the values are.
type Loose = number | string | boolean;
const orZero = (v: unknown) => (v || 0) as Loose;
const text = (v: unknown) => String(v || '');

function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || Number.isNaN(v)) return true;
  return typeof v === 'object' && Object.keys(v as object).length === 0;
}

/** `startsWith`/`endsWith` on a non-string value 1 throw in n8n too; here with a clear message. */
function asString(v: unknown, op: string): string {
  if (typeof v !== 'string')
    throw new NodeOperationError(
      `The operation '${op}' needs a text value 1, got ${JSON.stringify(v) ?? 'undefined'}`,
    );
  return v;
}

/** A regex operation: n8n's `/body/flags` or a bare body, matched within the platform's regex bounds. */
async function regexHolds(value1: unknown, value2: unknown): Promise<boolean> {
  try {
    return await userRegexTest(parseUserRegex(text(value2)), text(value1));
  } catch (err) {
    if (err instanceof UserRegexError) throw new NodeOperationError(err.message);
    throw err;
  }
}

/** Whether `operation` holds for the two (resolved) values. */
export async function legacyCompare(operation: string, value1: unknown, value2: unknown): Promise<boolean> {
  switch (operation) {
    case 'after':
    case 'larger':
      return orZero(value1) > orZero(value2);
    case 'before':
    case 'smaller':
      return orZero(value1) < orZero(value2);
    case 'largerEqual':
      return orZero(value1) >= orZero(value2);
    case 'smallerEqual':
      return orZero(value1) <= orZero(value2);
    case 'equal':
      return value1 === value2;
    case 'notEqual':
      return value1 !== value2;
    case 'contains':
      return text(value1).includes(text(value2));
    case 'notContains':
      return !text(value1).includes(text(value2));
    case 'startsWith':
      return asString(value1, operation).startsWith(String(value2));
    case 'notStartsWith':
      return !asString(value1, operation).startsWith(String(value2));
    case 'endsWith':
      return asString(value1, operation).endsWith(String(value2));
    case 'notEndsWith':
      return !asString(value1, operation).endsWith(String(value2));
    case 'isEmpty':
      return isEmpty(value1);
    case 'isNotEmpty':
      return !isEmpty(value1);
    case 'regex':
      return regexHolds(value1, value2);
    case 'notRegex':
      return !(await regexHolds(value1, value2));
    default:
      throw new NodeOperationError(`Unknown comparison operation '${operation}'`);
  }
}

/**
 * IF v1 / Filter v1: every condition of every type in n8n's order (boolean, dateTime, number, string);
 * `any` holds at the first that holds, `all` fails at the first that fails.
 */
export async function legacyConditionsHold(conditions: Conditions, any: boolean): Promise<boolean> {
  for (const type of LEGACY_DATA_TYPES) {
    for (const c of conditions[type] ?? []) {
      const [v1, v2] =
        type === 'dateTime' ? [legacyDateTime(c.value1), legacyDateTime(c.value2)] : [c.value1, c.value2];
      const holds = await legacyCompare(c.operation, v1, v2);
      if (holds === any) return any;
    }
  }
  return !any;
}
