import { type TSchema, Type } from 'typebox';
import { MAX_OFFSET } from './list-query.js';

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

/** `{data, nextCursor}`; items lose `required` because `fields` may project them away. */
export function ListEnvelope<T extends TSchema>(item: T) {
  const projected = { ...item, required: undefined } as unknown as T;
  return Type.Object({ data: Type.Array(projected), nextCursor: Nullable(Type.String()) });
}

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
