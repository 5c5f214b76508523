/**
 * The platform's short `if` and `switch` (conditions `{value1, operation, value2}` typed when they run)
 * as n8n's If v2.2 and Switch v3.2, whose filter conditions name an operator type when saved. Each old
 * operation maps to the n8n operator that gives the same answer for the values it is meant for, under
 * loose type validation and case-sensitive comparison; docs/decisions.md lists where mixed-type values
 * now differ. A shape the old node refused is returned as null, and the caller keeps it as given, so
 * n8n's node refuses it in turn.
 */

type Parameters = Record<string, unknown>;
type Operator = { type: string; operation: string; singleValue?: true };

/** old operation → n8n operator (and, for isTrue/isFalse, the fixed right value). */
const OPERATORS: Record<string, { operator: Operator; rightValue?: string }> = {
  // String comparison: the old node compared across types by their text (1 equals "1").
  equals: { operator: { type: 'string', operation: 'equals' } },
  notEquals: { operator: { type: 'string', operation: 'notEquals' } },
  gt: { operator: { type: 'number', operation: 'gt' } },
  gte: { operator: { type: 'number', operation: 'gte' } },
  lt: { operator: { type: 'number', operation: 'lt' } },
  lte: { operator: { type: 'number', operation: 'lte' } },
  contains: { operator: { type: 'string', operation: 'contains' } },
  notContains: { operator: { type: 'string', operation: 'notContains' } },
  startsWith: { operator: { type: 'string', operation: 'startsWith' } },
  endsWith: { operator: { type: 'string', operation: 'endsWith' } },
  isEmpty: { operator: { type: 'string', operation: 'empty', singleValue: true } },
  isNotEmpty: { operator: { type: 'string', operation: 'notEmpty', singleValue: true } },
  // The old node held `true` and "true" true, nothing else: exactly a text comparison with "true".
  isTrue: { operator: { type: 'string', operation: 'equals' }, rightValue: 'true' },
  isFalse: { operator: { type: 'string', operation: 'equals' }, rightValue: 'false' },
};

/** What n8n's editor stores in an If v2.2 / Switch v3.2 filter with "Convert types where required" on. */
const FILTER_OPTIONS = { caseSensitive: true, leftValue: '', typeValidation: 'loose', version: 2 };

const isObject = (v: unknown): v is Parameters => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `{conditions, combine}` → n8n's filter value; null when the old node would have refused it. */
export function filterOf(conditions: unknown, combine: unknown = 'all'): Parameters | null {
  if (!Array.isArray(conditions) || conditions.length === 0 || !conditions.every(isObject)) return null;
  if (combine !== 'all' && combine !== 'any') return null;
  return {
    options: { ...FILTER_OPTIONS },
    conditions: conditions.map((c, i) => {
      const known = typeof c.operation === 'string' && Object.hasOwn(OPERATORS, c.operation);
      // An unknown operation keeps its name, so n8n's schema names it at its own path.
      const { operator, rightValue } = known
        ? (OPERATORS[c.operation as string] as (typeof OPERATORS)[string])
        : { operator: { type: 'string', operation: String(c.operation) }, rightValue: undefined };
      const right = rightValue ?? c.value2;
      return {
        id: `c${i}`,
        leftValue: c.value1,
        ...(right !== undefined && operator.singleValue !== true ? { rightValue: right } : {}),
        operator: { ...operator },
      };
    }),
    combinator: combine === 'any' ? 'or' : 'and',
  };
}

/** `if {conditions, combine}` → If v2.2's parameters, or null (kept as given). */
export function ifParameters(p: Parameters): Parameters | null {
  const { conditions, combine, ...rest } = p;
  const filter = filterOf(conditions, combine);
  return filter && { ...rest, conditions: filter, looseTypeValidation: true, options: {} };
}

/** `switch {rules, fallbackOutput, allMatchingOutputs}` → Switch v3.2's parameters, or null. */
export function switchParameters(p: Parameters): Parameters | null {
  const { rules, fallbackOutput, allMatchingOutputs, ...rest } = p;
  if (!Array.isArray(rules) || rules.length === 0 || !rules.every(isObject)) return null;
  const values = rules.map((r) => filterOf(r.conditions, r.combine));
  if (values.some((v) => v === null)) return null;
  const options: Parameters = {};
  if (fallbackOutput !== undefined && fallbackOutput !== 'none') options.fallbackOutput = fallbackOutput;
  if (allMatchingOutputs !== undefined) options.allMatchingOutputs = allMatchingOutputs;
  return {
    ...rest,
    rules: { values: values.map((conditions) => ({ conditions, renameOutput: false, outputKey: '' })) },
    looseTypeValidation: true,
    options,
  };
}
