import { type Clock, isoNow } from '../../core/clock.js';
import { AppError, notFound } from '../../core/errors.js';
import type { ProfileRow, ProfileStore } from './profile-store.js';
import type {
  PatchProfileInput,
  Preferences,
  PreferencesPatchT,
  ProfileViewT,
  RegisterInput,
} from './schemas.js';

interface ProfileServiceDeps {
  store: ProfileStore;
  clock: Clock;
  /** Throws 400 naming each preference the catalog does not know; absent without commerce. */
  checkPreferences?: (preferences: PreferencesPatchT) => void;
  /** Makes sure the new user has a cart; absent without the cart module. */
  ensureCart?: (accountId: string, userId: string) => Promise<unknown>;
  /** Records the welcome message of a new user. */
  welcome: (accountId: string, userId: string, displayName: string) => Promise<void>;
}

/** `registrationSource` of a profile made by its first PATCH. */
const PATCH_SOURCE = 'profile-patch';

const EMPTY: Preferences = { categories: [], moods: [], dislikedNotes: [], occasions: [] };

/** User profiles: registration (idempotent per user), reading and changing them. */
export class ProfileService {
  constructor(private readonly deps: ProfileServiceDeps) {}

  async find(accountId: string, userId: string): Promise<ProfileViewT | null> {
    const row = await this.deps.store.find(accountId, userId);
    return row ? view(row) : null;
  }

  async get(accountId: string, userId: string): Promise<ProfileViewT> {
    const profile = await this.find(accountId, userId);
    if (!profile) throw notFound('PROFILE_NOT_FOUND', 'User profile', userId);
    return profile;
  }

  /**
   * Creates the profile, the user's empty cart and their welcome; a user who has a profile gets it
   * back unchanged (`created: false`), however the request differs. The primary key decides which
   * of two concurrent registrations creates, so the welcome is recorded once.
   */
  async register(
    accountId: string,
    input: RegisterInput,
  ): Promise<{ created: boolean; profile: ProfileViewT }> {
    const displayName = displayNameOf(input);
    const preferences = this.preferences(EMPTY, input.preferences);
    const existing = await this.find(accountId, input.userId);
    if (existing) return { created: false, profile: existing };
    // The cart first: making it twice is harmless, so a failure here leaves nothing to repair.
    await this.deps.ensureCart?.(accountId, input.userId);
    const at = isoNow(this.deps.clock);
    const row: ProfileRow = {
      account_id: accountId,
      user_id: input.userId,
      display_name: displayName,
      email: input.email,
      preferences: JSON.stringify(preferences),
      registration_source: input.registrationSource,
      created_at: at,
      updated_at: at,
    };
    if (!(await this.deps.store.insertNew(row))) {
      return { created: false, profile: await this.get(accountId, input.userId) };
    }
    await this.deps.welcome(accountId, input.userId, displayName);
    return { created: true, profile: view(row) };
  }

  /**
   * PATCH: changes the profile, or creates it when the user has none (the specification names only
   * GET and PATCH, so a client that follows it has no other way to make one). A created profile is a
   * registration (cart and welcome included) with `registrationSource` "profile-patch", the userId as
   * its name and an empty email until the patch names them. Two first PATCHes at once: one creates,
   * the other changes what it created.
   */
  async upsert(
    accountId: string,
    userId: string,
    input: PatchProfileInput,
  ): Promise<{ created: boolean; profile: ProfileViewT }> {
    if (await this.deps.store.find(accountId, userId)) {
      return { created: false, profile: await this.update(accountId, userId, input) };
    }
    const registered = await this.register(accountId, {
      userId,
      displayName: input.displayName ?? userId,
      email: input.email ?? '',
      registrationSource: PATCH_SOURCE,
      ...(input.preferences ? { preferences: input.preferences } : {}),
    });
    if (registered.created) return registered;
    return { created: false, profile: await this.update(accountId, userId, input) };
  }

  async update(accountId: string, userId: string, input: PatchProfileInput): Promise<ProfileViewT> {
    const current = await this.deps.store.find(accountId, userId);
    if (!current) throw notFound('PROFILE_NOT_FOUND', 'User profile', userId);
    const preferences = this.preferences(parsePreferences(current.preferences), input.preferences);
    // Strictly later than the last change, even within one millisecond: clients compare them.
    const at = new Date(
      Math.max(this.deps.clock.now().getTime(), Date.parse(current.updated_at) + 1),
    ).toISOString();
    const next: ProfileRow = {
      ...current,
      display_name: input.displayName ?? current.display_name,
      email: input.email ?? current.email,
      preferences: JSON.stringify(preferences),
      updated_at: at,
    };
    await this.deps.store.update(accountId, userId, {
      display_name: next.display_name,
      email: next.email,
      preferences: next.preferences,
      updated_at: at,
    });
    return view(next);
  }

  /** `base` with each list of `patch` replacing its own: checked, moods in lower case, no repeats. */
  private preferences(base: Preferences, patch: PreferencesPatchT | undefined): Preferences {
    if (!patch) return base;
    const normal: PreferencesPatchT = {};
    if (patch.categories) normal.categories = unique(patch.categories);
    if (patch.moods) normal.moods = unique(patch.moods.map((m) => m.toLowerCase()));
    if (patch.dislikedNotes) normal.dislikedNotes = unique(patch.dislikedNotes);
    if (patch.occasions) normal.occasions = unique(patch.occasions);
    this.deps.checkPreferences?.(normal);
    return { ...base, ...normal };
  }
}

function displayNameOf(input: RegisterInput): string {
  if (input.name !== undefined && input.displayName !== undefined && input.name !== input.displayName) {
    throw new AppError('VALIDATION_ERROR', '`name` and `displayName` differ; send one of them', {
      fields: [{ field: 'displayName', message: 'must equal name when both are sent' }],
    });
  }
  const name = input.displayName ?? input.name;
  if (name === undefined) {
    throw new AppError('VALIDATION_ERROR', 'A user needs a name', {
      fields: [{ field: 'displayName', message: 'send `name` or `displayName`' }],
    });
  }
  return name;
}

const unique = (values: readonly string[]): string[] => [...new Set(values)];

function parsePreferences(text: string): Preferences {
  return { ...EMPTY, ...(JSON.parse(text) as Partial<Preferences>) };
}

function view(row: ProfileRow): ProfileViewT {
  return {
    userId: row.user_id,
    displayName: row.display_name,
    email: row.email,
    preferences: parsePreferences(row.preferences),
    registrationSource: row.registration_source,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
