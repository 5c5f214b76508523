import { type Static, Type } from 'typebox';
import { Timestamp } from '../../core/http/schemas.js';

const UserId = Type.String({ minLength: 1, maxLength: 100 });
const DisplayName = Type.String({ minLength: 1, maxLength: 200 });
const Email = Type.String({ format: 'email', maxLength: 254 });
const Word = Type.String({ minLength: 1, maxLength: 100 });

const preferenceFields = {
  categories: Type.Array(Word, { maxItems: 20, description: 'Scent category ids, most liked first' }),
  moods: Type.Array(Word, { maxItems: 20, description: 'Mood words of the scent catalog' }),
  dislikedNotes: Type.Array(Word, { maxItems: 100, description: 'Note ids never to propose' }),
  occasions: Type.Array(Word, { maxItems: 20, description: 'Free words: office, evening, …' }),
};

/** A change of preferences: each key sent replaces that list; keys not sent stay. */
const PreferencesPatch = Type.Partial(Type.Object(preferenceFields), { additionalProperties: false });
export type PreferencesPatchT = Static<typeof PreferencesPatch>;

const PreferencesView = Type.Object(preferenceFields);
export type Preferences = Static<typeof PreferencesView>;

export const RegisterBody = Type.Object(
  {
    userId: UserId,
    email: Email,
    name: Type.Optional(DisplayName),
    displayName: Type.Optional(DisplayName),
    registrationSource: Type.String({ minLength: 1, maxLength: 100 }),
    preferences: Type.Optional(PreferencesPatch),
    // The user-registration workflow's onboarding state; accepted, not kept (the profile is the state).
    onboarding: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: false, description: '`name` or `displayName` (equal if both)' },
);
export type RegisterInput = Static<typeof RegisterBody>;

export const PatchProfileBody = Type.Object(
  {
    displayName: Type.Optional(DisplayName),
    email: Type.Optional(Email),
    preferences: Type.Optional(PreferencesPatch),
  },
  { additionalProperties: false },
);
export type PatchProfileInput = Static<typeof PatchProfileBody>;

export const ProfileParams = Type.Object({ userId: UserId });

export const ProfileView = Type.Object({
  userId: Type.String(),
  displayName: Type.String(),
  email: Type.String(),
  preferences: PreferencesView,
  registrationSource: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type ProfileViewT = Static<typeof ProfileView>;
