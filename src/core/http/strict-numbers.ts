import type { ErrorObject, ValidateFunction } from 'ajv';

/**
 * Query strings, path parameters and headers arrive as text and Ajv coerces them with `Number()`,
 * which also takes `0x10`, `1e3`, ` 1` and `1.0`. A numeric parameter is accepted only as plain
 * decimal digits (a leading minus where the schema allows negatives) before Ajv coerces it.
 */

interface SchemaNode {
  type?: string | string[];
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  minimum?: number;
  exclusiveMinimum?: number;
  properties?: Record<string, SchemaNode>;
}

const types = (node: SchemaNode): string[] => {
  if (node.anyOf || node.oneOf) return (node.anyOf ?? node.oneOf ?? []).flatMap(types);
  if (node.type === undefined) return ['any'];
  return Array.isArray(node.type) ? node.type : [node.type];
};

/** The pattern a numeric-only parameter must match, or null when the schema also takes text. */
function patternOf(node: SchemaNode): RegExp | null {
  const kinds = types(node).filter((t) => t !== 'null');
  if (kinds.length === 0 || !kinds.every((t) => t === 'integer' || t === 'number')) return null;
  const floor = node.minimum ?? node.exclusiveMinimum;
  const sign = floor !== undefined && floor >= 0 ? '' : '-?';
  return kinds.includes('number') ? new RegExp(`^${sign}\\d+(\\.\\d+)?$`) : new RegExp(`^${sign}\\d+$`);
}

/** Returns a check of the raw values, or null when the schema has no numeric property. */
function strictNumberCheck(schema: unknown): ((data: unknown) => ErrorObject[]) | null {
  const properties = (schema as SchemaNode | null)?.properties;
  if (!properties) return null;
  const checks = Object.entries(properties)
    .map(([name, node]) => [name, patternOf(node)] as const)
    .filter((entry): entry is readonly [string, RegExp] => entry[1] !== null);
  if (checks.length === 0) return null;
  return (data) => {
    if (data === null || typeof data !== 'object') return [];
    const issues: ErrorObject[] = [];
    for (const [name, pattern] of checks) {
      const raw = (data as Record<string, unknown>)[name];
      const values = Array.isArray(raw) ? raw : [raw];
      if (values.some((v) => typeof v === 'string' && !pattern.test(v))) {
        issues.push({
          keyword: 'type',
          instancePath: `/${name}`,
          schemaPath: `#/properties/${name}`,
          params: {},
          message: `must be written in plain decimal digits${pattern.source.includes('-?') ? ' (a leading - allowed)' : ''}`,
        });
      }
    }
    return issues;
  };
}

/**
 * Wraps a compiled validator of a text part: the raw check first, then Ajv (which coerces).
 * `schemaEnv` is kept: Fastify passes Ajv the parent object only when it sees it, and Ajv needs
 * that to replace a coerced root value.
 */
export function withStrictNumbers(validate: ValidateFunction, schema: unknown): ValidateFunction {
  const check = strictNumberCheck(schema);
  if (!check) return validate;
  const wrapped = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
    const issues = check(data);
    if (issues.length > 0) {
      wrapped.errors = issues;
      return false;
    }
    const valid = validate(data, context);
    wrapped.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  wrapped.schemaEnv = validate.schemaEnv;
  return wrapped;
}
