import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { checkParameters, converted, isValid, withDefaults } from './parameters.js';
import { defaultsSchemaOf, valueSchemaOf } from './value-schemas.js';

const Schema = Type.Object(
  {
    operation: Type.Enum(['insert', 'select', 'delete'] as const, { default: 'insert' }),
    mode: Type.Optional(Type.Enum(['a', 'b'] as const)),
    count: Type.Number({ default: 5 }),
    label: Type.Optional(Type.String()),
    table: Type.Optional(
      Type.Union([
        Type.String(),
        Type.Object({ mode: Type.Enum(['list', 'id'] as const), value: Type.String() }),
      ]),
    ),
    rows: Type.Optional(
      Type.Array(
        Type.Object({ dir: Type.Enum(['ASC', 'DESC'] as const, { default: 'ASC' }), column: Type.String() }),
      ),
    ),
    options: Type.Object(
      { batching: Type.Optional(Type.Enum(['single', 'transaction'] as const)) },
      { default: {} },
    ),
    // A union whose second variant holds a default: which variant is filled depends on the checks.
    target: Type.Optional(
      Type.Union([
        Type.Object({ kind: Type.Literal('url'), url: Type.String() }),
        Type.Object({ kind: Type.Literal('id'), id: Type.String({ default: 'x' }) }),
      ]),
    ),
    plain: Type.Optional(Type.Object({ a: Type.Optional(Type.String()), b: Type.Array(Type.Number()) })),
    byName: Type.Optional(Type.Record(Type.String(), Type.Object({ on: Type.Boolean({ default: true }) }))),
  },
  { additionalProperties: false },
);

const VALUES: unknown[] = [
  {},
  { operation: 'select', count: '7', label: 12 },
  { table: { mode: 'list', value: 't' }, rows: [{ column: 'a' }, { column: 'b', dir: 'DESC' }] },
  { mode: 'b', options: { batching: 'transaction' } },
  { operation: 'nope', count: 'x', extra: true },
  { target: { kind: 'id' }, plain: { b: [1, '2'] }, byName: { a: {}, b: { on: false } } },
  { target: { kind: 'url', url: 'u' }, plain: { a: 3 } },
  { target: { kind: 'other' }, plain: 'text', byName: 5 },
];

const kinds = (node: unknown, out: Set<string> = new Set()): Set<string> => {
  if (node === null || typeof node !== 'object') return out;
  const kind = (node as Record<string, unknown>)['~kind'];
  if (typeof kind === 'string') out.add(kind);
  for (const value of Object.values(node)) kinds(value, out);
  return out;
};

describe('value schemas: enums evaluated once, parts without defaults passed over', () => {
  it('holds no Enum, and is made once per schema', () => {
    expect(kinds(Schema).has('Enum')).toBe(true);
    expect(kinds(valueSchemaOf(Schema)).has('Enum')).toBe(false);
    expect(valueSchemaOf(Schema)).toBe(valueSchemaOf(Schema));
  });

  it('the defaults copy passes over what holds no default, and keeps a union with one whole', () => {
    const props = (defaultsSchemaOf(Schema) as unknown as { properties: Record<string, unknown> }).properties;
    expect(kinds(props.plain)).toEqual(new Set(['Unknown']));
    expect(kinds(props.label)).toEqual(new Set(['Unknown']));
    expect(kinds(props.target)).toEqual(kinds(valueSchemaOf(Schema.properties.target)));
    expect(kinds(props.byName).has('Record')).toBe(true);
  });

  it.each(VALUES)('defaults and conversions are those of the schema as written: %j', (value) => {
    expect(withDefaults(Schema, value)).toEqual(Value.Default(Schema, structuredClone(value)));
    expect(converted(Schema, structuredClone(value))).toEqual(Value.Convert(Schema, structuredClone(value)));
  });

  it('checks keep the written schema and its messages', () => {
    expect(isValid(Schema, withDefaults(Schema, { operation: 'select' }))).toBe(true);
    expect(isValid(Schema, withDefaults(Schema, { operation: 'nope' }))).toBe(false);
    expect(checkParameters(Schema, { operation: 'nope' }, 'p', false)).toEqual([
      { path: 'p.operation', message: expect.any(String) },
    ]);
  });
});
