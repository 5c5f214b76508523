import { type TSchema, Type } from 'typebox';
import { type ListSpec, MAX_OFFSET } from './list-query.js';

/** The one error body of every route (DESIGN.md: satisfies the general and the workflow shape). */
export const ErrorBody = Type.Object(
  {
    error: Type.Literal(true),
    code: Type.String(),
    message: Type.String(),
    details: Type.Object({}, { additionalProperties: true }),
    requestId: Type.String(),
  },
  { $id: 'ErrorBody', description: 'Error' },
);

/** Adds the shared error responses to a route's success responses. */
export function withErrors<T extends Record<number, TSchema>>(
  success: T,
): T & Record<'4xx' | '5xx', TSchema> {
  return { ...success, '4xx': ErrorBody, '5xx': ErrorBody };
}

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** Shared list query parameters; field filters are extra properties, checked by the list helper. */
export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_OFFSET })),
    sort: Type.Optional(Type.String()),
    order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
    fields: Type.Optional(Type.String({ description: 'Comma-separated fields to include' })),
    cursor: Type.Optional(Type.String({ description: 'Opaque cursor from a previous nextCursor' })),
  },
  { additionalProperties: Type.String() },
);

/** What the document shows for a validating schema that checks less than the route enforces. */
const documented = new WeakMap<object, TSchema>();

/** The schema the OpenAPI document shows for a route schema (itself unless a richer one is known). */
export function documentedSchemaOf<T>(schema: T): T | TSchema {
  return (schema !== null && typeof schema === 'object' && documented.get(schema)) || schema;
}

function filterSchema(type: ListSpec['filters'][string]): TSchema {
  if (typeof type !== 'string') return Type.Enum([...type]);
  if (type === 'boolean') return Type.Boolean();
  if (type === 'integer') return Type.Integer();
  return Type.String();
}

/** What a list's query accepts: the rules of its ListSpec (list-query.ts). */
export type ListRules = Pick<
  ListSpec,
  'sortable' | 'filters' | 'projectable' | 'defaultSort' | 'defaultOrder' | 'defaultLimit' | 'maxLimit'
>;

/**
 * A list route's query: validated as given (ListQuery by default; the list helper checks it against
 * the spec, with its own messages), and documented with the spec's rules: the limit's maximum, the
 * sortable and projectable fields, the filters with their types. Unknown parameters are refused.
 */
export function listQueryOf(spec: ListRules): typeof ListQuery;
export function listQueryOf<T extends TSchema>(spec: ListRules, validating: T): T;
export function listQueryOf(spec: ListRules, given?: TSchema): TSchema {
  const validating =
    given ?? Type.Object({ ...ListQuery.properties }, { additionalProperties: Type.String() });
  const fields = spec.projectable.join('|');
  const filters = Object.fromEntries(
    Object.entries(spec.filters).map(([name, type]) => [name, Type.Optional(filterSchema(type))]),
  );
  documented.set(
    validating,
    Type.Object(
      {
        limit: Type.Optional(
          Type.Integer({ minimum: 1, maximum: spec.maxLimit, default: spec.defaultLimit }),
        ),
        offset: ListQuery.properties.offset,
        sort: Type.Optional(Type.Enum([...spec.sortable], { default: spec.defaultSort })),
        order: Type.Optional(
          Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: spec.defaultOrder }),
        ),
        ...(fields
          ? {
              fields: Type.Optional(
                Type.String({
                  description: `Comma-separated fields to include (id is always kept): ${spec.projectable.join(', ')}`,
                  pattern: `^(${fields})(,(${fields}))*$`,
                }),
              ),
            }
          : {}),
        cursor: ListQuery.properties.cursor,
        ...filters,
      },
      { additionalProperties: false },
    ),
  );
  return validating;
}

/**
 * `{data, nextCursor}`; items lose `required` because `fields` may project them away, all but `id`,
 * which a projection always keeps.
 */
export function ListEnvelope<T extends TSchema>(item: T) {
  const kept = (item as { required?: string[] }).required?.includes('id') ? ['id'] : undefined;
  const projected = { ...item, required: kept } as unknown as T;
  return Type.Object({ data: Type.Array(projected), nextCursor: Nullable(Type.String()) });
}

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
