import { type Static, Type } from 'typebox';
import { type ListRules, listQueryOf } from '../../../core/http/schemas.js';

/** n8n's tag names: 1–24 characters. */
const Name = Type.String({ minLength: 1, maxLength: 24 });

export const TagBody = Type.Object({ name: Name }, { additionalProperties: false });
export type TagBodyT = Static<typeof TagBody>;

export const TagView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

/** `PUT /api/v1/workflows/{id}/tags`: n8n's body, the tags by id. */
export const WorkflowTagsBody = Type.Array(
  Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
  { maxItems: 100 },
);
export type WorkflowTagsBodyT = Static<typeof WorkflowTagsBody>;

export const TAG_LIST_RULES = {
  sortable: ['name', 'createdAt'],
  filters: { name: 'string' },
  projectable: ['id', 'name', 'createdAt', 'updatedAt'],
  defaultSort: 'name',
  defaultOrder: 'asc',
  defaultLimit: 100,
  maxLimit: 250,
} satisfies ListRules;

export const TagListQuery = listQueryOf(TAG_LIST_RULES);
