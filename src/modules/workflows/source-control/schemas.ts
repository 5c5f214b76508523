import { type Static, Type } from 'typebox';

/** n8n's pull body: `force` is accepted (the platform keeps no uncommitted local changes to discard). */
export const PullBody = Type.Object(
  {
    force: Type.Optional(Type.Boolean()),
    autoPublish: Type.Optional(
      Type.Literal('none', { description: "Only n8n's default: pulled workflows keep their active state" }),
    ),
  },
  { additionalProperties: false },
);

/** n8n's push body: the files by id and type (workflows only here) and the commit message. */
export const PushBody = Type.Object(
  {
    commitMessage: Type.String({ minLength: 1, maxLength: 1000 }),
    fileNames: Type.Array(
      Type.Object(
        { id: Type.String({ minLength: 1, maxLength: 100 }), type: Type.Literal('workflow') },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
    force: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type PushBodyT = Static<typeof PushBody>;

export const SourceControlledFile = Type.Object({
  file: Type.String({ description: 'Path in the repository' }),
  id: Type.String(),
  name: Type.String(),
  type: Type.Literal('workflow'),
  status: Type.Union([Type.Literal('created'), Type.Literal('modified')]),
  location: Type.Union([Type.Literal('local'), Type.Literal('remote')]),
  conflict: Type.Boolean(),
  updatedAt: Type.String(),
  pushed: Type.Optional(Type.Boolean()),
});

export const PushView = Type.Object({ data: Type.Array(SourceControlledFile) });
