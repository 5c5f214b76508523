import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { fromPattern, sampleOf, sampleString } from '../../src/core/http/openapi-examples.js';

// TypeBox writes draft-07 tuples: the server's Ajv, not the 2020-12 one the document is checked with.
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
const valid = (schema: object, value: unknown) => ajv.validate(schema, value) || ajv.errorsText(ajv.errors);

describe('openapi-examples: a deterministic example from a schema', () => {
  it('takes const, the schema’s own example, the default, then the first enum member', () => {
    expect(sampleOf({ const: 'x', enum: ['a'] })).toBe('x');
    expect(sampleOf({ type: 'string', examples: ['given'], default: 'd' })).toBe('given');
    expect(sampleOf({ type: 'integer', default: 20, minimum: 1 })).toBe(20);
    expect(sampleOf({ enum: ['asc', 'desc'] })).toBe('asc');
    expect(sampleOf(Type.Union([Type.Literal('b'), Type.Literal('c')]))).toBe('b');
  });

  it('writes strings by format, pattern and length', () => {
    expect(sampleString({ type: 'string', format: 'date-time' })).toBe('2025-01-01T00:00:00.000Z');
    expect(sampleString({ type: 'string', format: 'email' })).toBe('user@example.com');
    expect(sampleString({ type: 'string', format: 'uri' })).toBe('https://example.com');
    expect(sampleString({ type: 'string', format: 'uuid' })).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4/);
    expect(sampleString({ type: 'string' })).toBe('string');
    expect(sampleString({ type: 'string', maxLength: 3 })).toBe('str');
    expect(sampleString({ type: 'string', minLength: 10 })).toHaveLength(10);
    expect(sampleString({ type: 'string', pattern: '^[A-Z]{3}$' })).toBe('AAA');
    expect(sampleString({ type: 'string', pattern: '^#[0-9A-F]{6}$' })).toBe('#000000');
    // An open quantifier repeats until the minimum length is met.
    expect(sampleString({ type: 'string', pattern: '^[A-Za-z0-9_-]+$', minLength: 3 })).toBe('AAA');
  });

  it('generates strings the patterns in use match', () => {
    const patterns = [
      '^(?:[a-z*]+:(?:read|write|delete|admin)|llm:model:[A-Za-z0-9._:/@+-]{1,100})$',
      '^(id|name|type)(,(id|name|type))*$',
      '^\\d{1,9}(\\.\\d{1,2})?$',
      '^(?!\\.\\.?$)',
      '\\S',
      '^[a-z0-9_-]{1,60}\\.svg$',
      '^workflow:',
      '^(?:[Aa][DEde]|[Bb][Aa])$',
      '^[^,]+$',
    ];
    for (const pattern of patterns)
      expect(new RegExp(pattern, 'u').test(fromPattern(pattern)), `${pattern}: ${fromPattern(pattern)}`).toBe(
        true,
      );
    expect(fromPattern('^(?:[Aa][DEde]|[Bb][Aa])$')).toBe('AD');
  });

  it('takes numbers at their lower bound, on their step', () => {
    expect(sampleOf({ type: 'integer', minimum: 60 })).toBe(60);
    expect(sampleOf({ type: 'integer', exclusiveMinimum: 0 })).toBe(1);
    expect(sampleOf({ type: 'number' })).toBe(0);
    expect(sampleOf({ type: 'number', maximum: -5 })).toBe(-5);
    expect(sampleOf({ type: 'number', minimum: 0.3, multipleOf: 0.1 })).toBe(0.3);
    expect(sampleOf({ type: 'number', minimum: 1.001, multipleOf: 0.01 })).toBe(1.01);
    expect(sampleOf({ type: 'boolean' })).toBe(true);
  });

  it('fills required properties only, one item per array, the first non-null branch', () => {
    const schema = Type.Object({
      id: Type.String(),
      tags: Type.Array(Type.String({ minLength: 1 })),
      when: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
      note: Type.Optional(Type.String()),
      position: Type.Tuple([Type.Number(), Type.Number()]),
    });
    const sample = sampleOf(schema);
    expect(sample).toEqual({ id: 'string', tags: ['string'], when: '2025-01-01', position: [0, 0] });
    expect(valid(schema, sample)).toBe(true);
  });

  it('meets minProperties, minItems and maxItems', () => {
    const patch = Type.Object(
      { name: Type.Optional(Type.String()), age: Type.Optional(Type.Integer()) },
      {
        minProperties: 1,
      },
    );
    expect(sampleOf(patch)).toEqual({ name: 'string' });
    expect(sampleOf(Type.Array(Type.Integer(), { minItems: 3 }))).toEqual([0, 0, 0]);
    expect(sampleOf(Type.Array(Type.Integer(), { maxItems: 0 }))).toEqual([]);
  });

  it('merges the parts of an intersection and follows local references', () => {
    const both = Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Boolean() })]);
    expect(sampleOf(both)).toEqual({ a: 'string', b: true });
    const components: Record<string, unknown> = { Thing: Type.Object({ n: Type.Integer({ minimum: 2 }) }) };
    const resolve = (ref: string) => components[ref.replace('#/components/schemas/', '')];
    expect(sampleOf({ $ref: '#/components/schemas/Thing' }, resolve)).toEqual({ n: 2 });
  });

  it('stops at a recursive schema', () => {
    const components: Record<string, unknown> = {
      Tree: {
        type: 'object',
        required: ['children'],
        properties: { children: { type: 'array', items: { $ref: '#/components/schemas/Tree' } } },
      },
    };
    const resolve = (ref: string) => components[ref.replace('#/components/schemas/', '')];
    expect(JSON.stringify(sampleOf({ $ref: '#/components/schemas/Tree' }, resolve))).toMatch(/\[\]|\{\}/);
  });
});
