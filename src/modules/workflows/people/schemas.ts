import { Type } from 'typebox';
import { Nullable, Timestamp } from '../../../core/http/schemas.js';

/** n8n's global roles; the portal's roles map onto them (owner, admin; developer and viewer are members). */
export const N8N_USER_ROLES = ['global:owner', 'global:admin', 'global:member'] as const;

/** n8n's user object, for a portal member of the account. */
export const UserView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  firstName: Type.String(),
  lastName: Type.String(),
  isPending: Type.Boolean({ description: 'Always false: a portal member has signed up' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  role: Type.Optional(
    Type.String({
      description: `With includeRole=true: ${N8N_USER_ROLES.join(' | ')} (the portal role in portalRole)`,
    }),
  ),
  portalRole: Type.Optional(
    Type.String({ description: "The portal's own role: owner, admin, developer, viewer" }),
  ),
});

export const UserList = Type.Object({ data: Type.Array(UserView), nextCursor: Nullable(Type.String()) });

const Paging = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 250, description: '100 by default' })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
};

export const USER_SORTS = ['id', 'email', 'createdAt'] as const;

export const UserListQuery = Type.Object(
  {
    ...Paging,
    sort: Type.Optional(Type.Enum([...USER_SORTS], { default: 'id' })),
    includeRole: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const UserGetQuery = Type.Object(
  { includeRole: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export const UserParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 320, description: "The member's id or email" }),
});

/** n8n's project: here a principal of the account (docs/n8n-api.md, "Projects"). */
export const ProjectView = Type.Object({
  id: Type.String({ description: 'account, member:<id> or key:<id>' }),
  name: Type.String(),
  type: Type.Union([Type.Literal('team'), Type.Literal('personal')]),
});

export const ProjectList = Type.Object({
  data: Type.Array(ProjectView),
  nextCursor: Nullable(Type.String()),
});

export const ProjectListQuery = Type.Object(
  {
    ...Paging,
    sort: Type.Optional(
      Type.Enum(['id'], { default: 'id', description: 'account, then keys, then members' }),
    ),
  },
  { additionalProperties: false },
);
