import { type Static, Type } from 'typebox';
import { CredentialBody } from '../schemas.js';

/**
 * n8n's `PATCH /credentials/{id}`: name and/or data. `type` may be given but not changed (the
 * workflows using the credential expect its fields); `isPartialData` merges the given fields into
 * the stored ones instead of replacing them all. n8n's `isGlobal` and `isResolvable` have no
 * meaning here and are refused by name, like any other field.
 */
export const CredentialPatchBody = Type.Object(
  {
    name: Type.Optional(CredentialBody.properties.name),
    type: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    data: Type.Optional(CredentialBody.properties.data),
    // No default: a default would make `{}` a change (minProperties counts it).
    isPartialData: Type.Optional(Type.Boolean({ description: 'Merge into the stored data (default false)' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type CredentialPatchBodyT = Static<typeof CredentialPatchBody>;

/** n8n's answer to `POST /credentials/{id}/test`. */
export const CredentialTestView = Type.Object({
  status: Type.Union([Type.Literal('OK'), Type.Literal('Error')]),
  message: Type.String(),
});

export const CredentialTypeParams = Type.Object({
  type: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'A credential type name, e.g. httpHeaderAuth',
  }),
});

/** n8n's answer to `GET /credentials/schema/{type}`: a JSON schema of the type's data. */
export const CredentialDataSchema = Type.Object({
  additionalProperties: Type.Literal(false),
  type: Type.Literal('object'),
  properties: Type.Record(Type.String(), Type.Object({ type: Type.Literal('string') })),
  required: Type.Array(Type.String()),
});

/** A principal of the account: `key:<id>` or `member:<id>` (n8n shares with projects; here with keys and members). */
const PrincipalRef = Type.String({ pattern: '^(key|member):[A-Za-z0-9_-]{1,100}$', maxLength: 110 });

/** n8n's `PUT /credentials/{id}/share`: the whole list of principals it is shared with (the owner stays). */
export const CredentialShareBody = Type.Object(
  { shareWithIds: Type.Array(PrincipalRef, { maxItems: 100, uniqueItems: true }) },
  { additionalProperties: false },
);

/** n8n's `PUT /credentials/{id}/transfer`: the new owner (`account` gives it to the account). */
export const CredentialTransferBody = Type.Object(
  {
    destinationProjectId: Type.Union([PrincipalRef, Type.Literal('account')], {
      description: 'key:<id>, member:<id>, or account',
    }),
  },
  { additionalProperties: false },
);

export const CredentialSharesView = Type.Object({
  id: Type.String(),
  owner: Type.String(),
  sharedWith: Type.Array(Type.String()),
});
