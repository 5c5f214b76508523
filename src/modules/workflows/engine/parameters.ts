import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { isExpression } from './expressions.js';
import type { ValidationProblem } from './types.js';
import { defaultsSchemaOf, valueSchemaOf } from './value-schemas.js';

/** `/a/0/b` → `.a[0].b` */
function pointerToPath(pointer: string): string {
  if (pointer === '') return '';
  return pointer
    .split('/')
    .slice(1)
    .map((seg) => seg.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `.${seg}`))
    .join('');
}

function valueAt(root: unknown, pointer: string): unknown {
  let cur = root;
  for (const seg of pointer.split('/').slice(1)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[seg.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return cur;
}

const checkers = new WeakMap<TSchema, ReturnType<typeof Compile>>();

/** A compiled checker per node schema: parameters with expressions are checked once per item. */
function checkerOf(schema: TSchema): ReturnType<typeof Compile> {
  let checker = checkers.get(schema);
  if (!checker) {
    checker = Compile(schema);
    checkers.set(schema, checker);
  }
  return checker;
}

/** The message of a parameter the node type (at that version) does not have. */
export const UNKNOWN_PARAMETER = 'is not a parameter of this node type and version';

/** Applies the schema's defaults to a copy of `params`. */
export function withDefaults(schema: TSchema, params: unknown): unknown {
  return Value.Default(defaultsSchemaOf(schema), structuredClone(params ?? {}));
}

/** Converts primitives in `params` (in place) to the schema's types where that is possible. */
export function converted(schema: TSchema, params: unknown): unknown {
  return Value.Convert(valueSchemaOf(schema), params);
}

/** Whether `value` (defaults applied) is valid for the schema, by its compiled checker. */
export function isValid(schema: TSchema, value: unknown): boolean {
  return checkerOf(schema).Check(value);
}

/**
 * Checks parameters against a node's schema. With `allowExpressions`, an expression string stands in
 * for any value (its type is known only at run time), so errors at or under one are dropped.
 */
export function checkParameters(
  schema: TSchema,
  params: unknown,
  basePath: string,
  allowExpressions: boolean,
): ValidationProblem[] {
  const value = withDefaults(schema, params);
  if (checkerOf(schema).Check(value)) return [];
  const problems: ValidationProblem[] = [];
  const seen = new Set<string>();
  for (const error of Value.Errors(schema, value)) {
    const pointer = error.instancePath;
    if (allowExpressions && underExpression(value, pointer)) continue;
    // `required` errors name the missing properties; report each at its own path.
    const missing = (error.params as { requiredProperties?: string[] }).requiredProperties;
    // An unknown parameter is reported at its own path; the parent's summary says nothing more.
    if (error.message === 'must not have additional properties') continue;
    const message = error.message === 'schema is false' ? UNKNOWN_PARAMETER : error.message;
    const entries = missing
      ? missing.map((p) => ({ path: `${basePath}${pointerToPath(pointer)}.${p}`, message: 'is required' }))
      : [{ path: `${basePath}${pointerToPath(pointer)}`, message }];
    for (const e of entries) {
      const key = `${e.path}\u0000${e.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      problems.push(e);
    }
  }
  return problems;
}

function underExpression(root: unknown, pointer: string): boolean {
  const segs = pointer.split('/').slice(1);
  for (let i = 0; i <= segs.length; i++) {
    if (isExpression(valueAt(root, i === 0 ? '' : `/${segs.slice(0, i).join('/')}`))) return true;
  }
  return false;
}
