import { Type } from 'typebox';
import { assertNever } from '../../../../core/errors.js';

const OPERATIONS = [
  'equals',
  'notEquals',
  'gt',
  'gte',
  'lt',
  'lte',
  'contains',
  'notContains',
  'startsWith',
  'endsWith',
  'isEmpty',
  'isNotEmpty',
  'isTrue',
  'isFalse',
] as const;
type Operation = (typeof OPERATIONS)[number];

/** `value1 <operation> value2`; value1 is usually an expression (`={{ $json.total }}`). */
export const Condition = Type.Object({
  value1: Type.Unknown(),
  operation: Type.Enum(OPERATIONS),
  value2: Type.Optional(Type.Unknown()),
});
export type ConditionT = { value1: unknown; operation: Operation; value2?: unknown };

export const Combine = Type.Enum(['all', 'any'] as const, { default: 'all' });

const isEmpty = (v: unknown) =>
  v === undefined ||
  v === null ||
  v === '' ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && v !== null && Object.keys(v).length === 0);

const num = (v: unknown) =>
  typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;

function equal(a: unknown, b: unknown): boolean {
  if (typeof a === 'object' || typeof b === 'object') return JSON.stringify(a) === JSON.stringify(b);
  return a === b || (typeof a !== typeof b && a !== undefined && b !== undefined && String(a) === String(b));
}

function test(c: ConditionT): boolean {
  const { value1: a, value2: b } = c;
  switch (c.operation) {
    case 'equals':
      return equal(a, b);
    case 'notEquals':
      return !equal(a, b);
    case 'gt':
      return num(a) > num(b);
    case 'gte':
      return num(a) >= num(b);
    case 'lt':
      return num(a) < num(b);
    case 'lte':
      return num(a) <= num(b);
    case 'contains':
      return Array.isArray(a) ? a.some((x) => equal(x, b)) : String(a ?? '').includes(String(b ?? ''));
    case 'notContains':
      return !(Array.isArray(a) ? a.some((x) => equal(x, b)) : String(a ?? '').includes(String(b ?? '')));
    case 'startsWith':
      return String(a ?? '').startsWith(String(b ?? ''));
    case 'endsWith':
      return String(a ?? '').endsWith(String(b ?? ''));
    case 'isEmpty':
      return isEmpty(a);
    case 'isNotEmpty':
      return !isEmpty(a);
    case 'isTrue':
      return a === true || a === 'true';
    case 'isFalse':
      return a === false || a === 'false';
    default:
      return assertNever(c.operation);
  }
}

export const matches = (conditions: ConditionT[], combine: 'all' | 'any'): boolean =>
  combine === 'all' ? conditions.every(test) : conditions.some(test);
