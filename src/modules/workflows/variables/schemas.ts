import { type Static, Type } from 'typebox';
import { ListQuery, type ListRules, listQueryOf } from '../../../core/http/schemas.js';

/** n8n's limits: a key of letters, digits and `_`, at most 50; a value of at most 1000 characters. */
const Key = Type.String({ minLength: 1, maxLength: 50, pattern: '^[A-Za-z0-9_]+$' });
const Value = Type.String({ maxLength: 1_000 });
/** n8n has one variable type. */
const VariableType = Type.Literal('string');

export const VariableBody = Type.Object(
  { key: Key, value: Value, type: Type.Optional(VariableType) },
  { additionalProperties: false },
);
export type VariableBodyT = Static<typeof VariableBody>;

export const VariablePatch = Type.Object(
  { key: Type.Optional(Key), value: Type.Optional(Value), type: Type.Optional(VariableType) },
  { additionalProperties: false, minProperties: 1 },
);
export type VariablePatchT = Static<typeof VariablePatch>;

/** n8n's variable; `project` is always null (the platform's variables belong to the account). */
export const VariableView = Type.Object({
  id: Type.String(),
  key: Type.String(),
  value: Type.String(),
  type: VariableType,
  project: Type.Null(),
});

export const VARIABLE_LIST_RULES = {
  sortable: ['id', 'key'],
  filters: { key: 'string' },
  projectable: ['id', 'key', 'value', 'type', 'project'],
  defaultSort: 'id',
  defaultOrder: 'asc',
  defaultLimit: 100,
  maxLimit: 250,
} satisfies ListRules;

/** n8n's query (`limit`, `cursor`, `state=empty`) plus the platform's list parameters. */
export const VariableListQuery = listQueryOf(
  // `state` is documented as a filter; the service takes it off before the list helper.
  { ...VARIABLE_LIST_RULES, filters: { ...VARIABLE_LIST_RULES.filters, state: ['empty'] } },
  Type.Object(
    {
      ...ListQuery.properties,
      key: Type.Optional(Type.String()),
      state: Type.Optional(Type.Literal('empty', { description: 'Only variables whose value is empty' })),
    },
    { additionalProperties: Type.String() },
  ),
);
