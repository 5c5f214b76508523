import { AppError } from '../../core/errors.js';
import { endpointArgs } from './endpoint-args.js';
import type { GameEndpoint } from './endpoint-types.js';
import type { GameClient } from './game-client.js';
import type { ManifestCache } from './manifest-cache.js';
import { type GameSettings, requireSettings } from './settings.js';
import type { Owner } from './store.js';
import type { UserTokens } from './user-tokens.js';

interface ProfileQuery {
  game: string;
  membershipType: number;
  membershipId: string;
  components: string;
}

interface VendorsQuery extends ProfileQuery {
  characterId: string;
  filter?: number;
}

/** The read use-cases of the game platform; each answers the upstream `Response`, unwrapped. */
export class GameService {
  constructor(
    private readonly settings: GameSettings,
    private readonly client: GameClient,
    private readonly tokens: UserTokens,
    private readonly manifests: ManifestCache,
  ) {}

  apiUsage(applicationId: string, range: { start?: string; end?: string }): Promise<unknown> {
    this.configured();
    return this.client.get({ path: ['App', 'ApiUsage', applicationId], query: range });
  }

  membershipsForCurrentUser(owner: Owner): Promise<unknown> {
    this.configured();
    return this.tokens.run(
      owner,
      (accessToken) => this.client.get({ path: ['User', 'GetMembershipsForCurrentUser'], accessToken }),
      { required: true },
    );
  }

  manifest(game: string): Promise<unknown> {
    this.configured();
    return this.manifests.get(game);
  }

  /** Public profile data anonymously; the caller's token, when connected, unlocks private components. */
  profile(owner: Owner, q: ProfileQuery): Promise<unknown> {
    this.configured();
    const path = [q.game, q.membershipType, 'Profile', q.membershipId];
    return this.tokens.run(
      owner,
      (accessToken) => this.client.get({ path, query: { components: q.components }, accessToken }),
      { required: false },
    );
  }

  /** Vendors and their economy need the character owner's token. */
  vendors(owner: Owner, q: VendorsQuery): Promise<unknown> {
    this.configured();
    const path = [q.game, q.membershipType, 'Profile', q.membershipId, 'Character', q.characterId, 'Vendors'];
    const query = { components: q.components, filter: q.filter === undefined ? undefined : String(q.filter) };
    return this.tokens.run(owner, (accessToken) => this.client.get({ path, query, accessToken }), {
      required: true,
    });
  }

  groupByName(groupName: string, groupType: number): Promise<unknown> {
    this.configured();
    return this.client.get({ path: ['GroupV2', 'Name', groupName, groupType] });
  }

  /**
   * Any endpoint of the table: arguments checked against it first (400 before anything else),
   * then the owner's token where the endpoint needs one (401 GAME_AUTH_REQUIRED before any
   * upstream call) or attached when connected. The manifest and its definitions come from the
   * version-keyed cache.
   */
  async endpoint(
    owner: Owner,
    endpoint: GameEndpoint,
    input: { params: Record<string, string>; query: Record<string, unknown>; body: unknown },
  ): Promise<unknown> {
    const args = endpointArgs(endpoint, input.params, input.query, input.body);
    this.configured();
    if (endpoint.name === 'getDestinyManifest') return this.manifests.get('Destiny2');
    if (endpoint.name === 'getDestinyEntityDefinition') {
      const { entityType = '', hashIdentifier = '' } = input.params;
      if (!/^Destiny\w{1,80}Definition$/.test(entityType)) {
        throw new AppError('VALIDATION_ERROR', 'entityType names a definition table', {
          fields: [{ field: 'params.entityType', message: 'must look like DestinyInventoryItemDefinition' }],
        });
      }
      return this.manifests.definition('Destiny2', entityType, hashIdentifier);
    }
    const call = (accessToken: string | undefined) =>
      this.client.call({ method: endpoint.method, ...args, accessToken });
    return this.tokens.run(owner, call, { required: endpoint.oauth === 'required' });
  }

  private configured(): void {
    requireSettings(this.settings, ['apiKey']);
  }
}
