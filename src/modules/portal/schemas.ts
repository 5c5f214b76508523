import { Type } from 'typebox';
import { Nullable, Timestamp } from '../../core/http/schemas.js';
import { PASSWORD_MAX, PASSWORD_MIN } from './password-rules.js';
import { MEMBER_ROLES } from './tables.js';

/** Roles a member can be given: the owner is made at first start, never by invitation or change. */
const AssignableRole = Type.Enum(['admin', 'developer', 'viewer'] as const, {
  description: 'owner is the account’s first member and cannot be given',
});

export const MemberView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: Type.Enum(MEMBER_ROLES),
  createdAt: Timestamp,
});

const CsrfToken = Type.String({ description: 'Send as X-CSRF-Token on POST, PUT, PATCH and DELETE' });

export const SignedInView = Type.Object({
  member: MemberView,
  csrfToken: CsrfToken,
  expiresAt: Timestamp,
});

export const CurrentSessionView = Type.Object({
  member: MemberView,
  account: Type.Object({ id: Type.String(), name: Type.String() }),
  csrfToken: CsrfToken,
  expiresAt: Timestamp,
});

const SessionItem = Type.Object({
  id: Type.String(),
  current: Type.Boolean({ description: 'The session making this request' }),
  createdAt: Timestamp,
  lastSeenAt: Timestamp,
  expiresAt: Timestamp,
  ip: Nullable(Type.String()),
  userAgent: Nullable(Type.String()),
});
export const SessionList = Type.Object({ data: Type.Array(SessionItem) });
export const MemberList = Type.Object({ data: Type.Array(MemberView) });

/** Checked by the service with worded messages (length, common passwords, the email); bounded here. */
const NewPassword = Type.String({
  maxLength: 4 * PASSWORD_MAX,
  description: `${PASSWORD_MIN} to ${PASSWORD_MAX} characters; not a common password, not built from the email`,
});
const LinkToken = Type.String({ minLength: 1, maxLength: 200, description: 'The token of the link' });

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 4 * PASSWORD_MAX }),
  },
  { additionalProperties: false },
);

export const SetupBody = Type.Object(
  { token: LinkToken, password: NewPassword },
  { additionalProperties: false },
);

export const AcceptInviteBody = Type.Object(
  { token: LinkToken, name: Type.String({ minLength: 1, maxLength: 100 }), password: NewPassword },
  { additionalProperties: false },
);

export const InviteBody = Type.Object(
  {
    // A plain shape, not format 'email': addresses on a local domain (`ops@intranet`) are fine.
    email: Type.String({ pattern: '^[^@\\s]+@[^@\\s]+$', maxLength: 320, description: 'name@domain' }),
    role: AssignableRole,
  },
  { additionalProperties: false },
);

export const InviteView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: AssignableRole,
  inviteUrl: Type.String({ description: 'One-time link; the token in it is shown only now' }),
  expiresAt: Timestamp,
});

export const UpdateMemberBody = Type.Object({ role: AssignableRole }, { additionalProperties: false });

/** Logout takes no body (an empty one, or `{}`). */
export const NoBody = Type.Object({}, { additionalProperties: false });
