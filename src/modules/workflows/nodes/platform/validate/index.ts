import { Type } from 'typebox';
import { assertNever } from '../../../../../core/errors.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json, ValidationProblem } from '../../../engine/types.js';
import { getPath } from '../split-items/index.js';

const FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'email'] as const;
type FieldType = (typeof FIELD_TYPES)[number];

const ValidateParameters = Type.Object({
  /** Dot path under each item's json where the checked object lives (e.g. `body`); empty = the item. */
  source: Type.String({ default: '' }),
  fields: Type.Array(
    Type.Object({
      field: Type.String({ minLength: 1 }),
      type: Type.Enum(FIELD_TYPES),
      required: Type.Boolean({ default: true }),
      minLength: Type.Optional(Type.Integer({ minimum: 0 })),
      maxLength: Type.Optional(Type.Integer({ minimum: 0 })),
      /** Allowed values: of a string, or of every entry of an array. */
      oneOf: Type.Optional(Type.Array(Type.String(), { minItems: 1 })),
    }),
    { minItems: 1 },
  ),
});

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function typeOk(type: FieldType, v: Json): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'object':
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    case 'array':
      return Array.isArray(v);
    case 'email':
      return typeof v === 'string' && v.length <= 254 && EMAIL.test(v);
    default:
      return assertNever(type);
  }
}

/** Checks fields of each item; fails with every problem listed (a 400 for a webhook body), else passes items on. */
export const validateNode = defineNode({
  type: 'n8n-nodes-platform.validate',
  schema: ValidateParameters,
  async execute(ctx) {
    const problems: ValidationProblem[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      const json = (ctx.items[i] as Item).json;
      const root = p.source === '' ? json : getPath(json, p.source);
      const prefix = `${ctx.items.length > 1 ? `[${i}].` : ''}${p.source === '' ? '' : `${p.source}.`}`;
      if (root === null || typeof root !== 'object' || Array.isArray(root)) {
        problems.push({ path: prefix.replace(/\.$/, '') || '$', message: 'must be an object' });
        continue;
      }
      for (const f of p.fields) {
        const v = getPath(root, f.field);
        const path = `${prefix}${f.field}`;
        if (v === undefined || v === null) {
          if (f.required) problems.push({ path, message: 'is required' });
          continue;
        }
        if (!typeOk(f.type, v)) {
          problems.push({
            path,
            message: f.type === 'email' ? 'must be an email address' : `must be ${f.type}`,
          });
          continue;
        }
        const len = typeof v === 'string' || Array.isArray(v) ? v.length : undefined;
        if (len !== undefined && f.minLength !== undefined && len < f.minLength) {
          problems.push({ path, message: `must have at least ${f.minLength} characters or entries` });
        }
        if (len !== undefined && f.maxLength !== undefined && len > f.maxLength) {
          problems.push({ path, message: `must have at most ${f.maxLength} characters or entries` });
        }
        const allowed = f.oneOf;
        if (allowed) {
          const values = Array.isArray(v) ? v : [v];
          const bad = values.filter((x) => typeof x !== 'string' || !allowed.includes(x));
          if (bad.length > 0) {
            problems.push({
              path,
              message: `must be among ${allowed.join(', ')}; got ${JSON.stringify(bad)}`,
            });
          }
        }
      }
    }
    if (problems.length > 0) {
      throw new NodeOperationError(
        `Validation failed: ${problems.map((x) => `${x.path} ${x.message}`).join('; ')}`,
        { description: JSON.stringify(problems), problems },
      );
    }
    return output(ctx.items);
  },
});
