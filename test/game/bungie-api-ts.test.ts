import * as d2 from 'bungie-api-ts/destiny2';
import * as groups from 'bungie-api-ts/groupv2';
import type { HttpClientConfig } from 'bungie-api-ts/http';
import * as social from 'bungie-api-ts/social';
import * as user from 'bungie-api-ts/user';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authModule } from '../../src/modules/auth/index.js';
import { gameModule } from '../../src/modules/game/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { connectAccount } from './connect.js';
import { FakeGamePlatform } from './fake-game-platform.js';

const dialects = await testDialects();
const modules = [authModule, healthModule, gameModule];
const MEMBER = '4611686018400000042';
const ID = '4611686018467000123';

// bungie-api-ts declares its enums `const`: their numbers, typed (isolatedModules cannot read them).
const PROFILES = 100 as d2.DestinyComponentType;
const CHARACTERS = 200 as d2.DestinyComponentType;
const STEAM = 3 as d2.BungieMembershipType;
const CLAN = 1 as groups.GroupType;

/**
 * The HttpClient an integration hands bungie-api-ts, pointed at the platform: its URLs rebased
 * from bungie.net's API root onto `/game`, its key as the bearer, the platform's unwrapped answer
 * put back into the envelope the functions type.
 */
function platformClient(origin: string, key: string, seen: string[]) {
  return async <T>(config: HttpClientConfig): Promise<T> => {
    const url = new URL(
      config.url.replace(/^https:\/\/(www|stats)\.bungie\.net\/Platform/, `${origin}/game`),
    );
    for (const [name, value] of Object.entries(config.params ?? {})) url.searchParams.set(name, value);
    seen.push(`${config.method} ${url.pathname}${url.search}`);
    const res = await fetch(url, {
      method: config.method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(config.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: config.body === undefined ? undefined : JSON.stringify(config.body),
    });
    const body = (await res.json()) as unknown;
    if (!res.ok) throw new Error(`${res.status} ${JSON.stringify(body)}`);
    return {
      Response: body,
      ErrorCode: 1,
      ErrorStatus: 'Success',
      Message: 'Ok',
      ThrottleSeconds: 0,
      MessageData: {},
    } as T;
  };
}

describe.each(dialects)("bungie-api-ts's own functions against the platform on %s", (dialect) => {
  let p: TestPlatform;
  let fake: FakeGamePlatform;
  let origin = '';
  beforeAll(async () => {
    fake = await new FakeGamePlatform().start();
    p = await createTestPlatform({ dialect, modules, env: fake.env() });
    await connectAccount(p, fake, MEMBER);
    origin = await p.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await p?.close();
    await fake?.stop();
  });

  it('a sample of 20 works unmodified and reaches the upstream path it names', async () => {
    const seen: string[] = [];
    const http = platformClient(origin, p.adminKey, seen);
    const item = {
      itemReferenceHash: 1363886209,
      stackSize: 1,
      transferToVault: false,
      itemId: ID,
      characterId: ID,
      membershipType: STEAM,
    };
    const calls: Array<[() => Promise<{ Response: unknown }>, string]> = [
      [
        () =>
          d2.getProfile(http, {
            membershipType: STEAM,
            destinyMembershipId: ID,
            components: [PROFILES, CHARACTERS],
          }),
        `/Destiny2/3/Profile/${ID}/`,
      ],
      [
        () =>
          d2.getCharacter(http, {
            membershipType: STEAM,
            destinyMembershipId: ID,
            characterId: ID,
            components: [CHARACTERS],
          }),
        `/Destiny2/3/Profile/${ID}/Character/${ID}/`,
      ],
      [
        () =>
          d2.getItem(http, {
            membershipType: STEAM,
            destinyMembershipId: ID,
            itemInstanceId: ID,
            components: [300 as d2.DestinyComponentType],
          }),
        `/Destiny2/3/Profile/${ID}/Item/${ID}/`,
      ],
      [
        () =>
          d2.getLinkedProfiles(http, { membershipType: STEAM, membershipId: ID, getAllMemberships: true }),
        `/Destiny2/3/Profile/${ID}/LinkedProfiles/`,
      ],
      [
        () =>
          d2.searchDestinyPlayerByBungieName(
            http,
            { membershipType: -1 as d2.BungieMembershipType },
            { displayName: 'Guardian Ä', displayNameCode: 1234 },
          ),
        '/Destiny2/SearchDestinyPlayerByBungieName/-1/',
      ],
      [
        () =>
          d2.getActivityHistory(http, {
            membershipType: STEAM,
            destinyMembershipId: ID,
            characterId: ID,
            count: 25,
            mode: 5 as d2.DestinyActivityModeType,
            page: 0,
          }),
        `/Destiny2/3/Account/${ID}/Character/${ID}/Stats/Activities/`,
      ],
      [
        () => d2.getPostGameCarnageReport(http, { activityId: '12345678901' }),
        '/Destiny2/Stats/PostGameCarnageReport/12345678901/',
      ],
      [
        () =>
          d2.getHistoricalStatsForAccount(http, {
            membershipType: STEAM,
            destinyMembershipId: ID,
            groups: [1 as d2.DestinyStatsGroupType],
          }),
        `/Destiny2/3/Account/${ID}/Stats/`,
      ],
      [() => d2.getPublicMilestones(http), '/Destiny2/Milestones/'],
      [() => d2.transferItem(http, item), '/Destiny2/Actions/Items/TransferItem/'],
      [
        () =>
          d2.pullFromPostmaster(http, {
            itemReferenceHash: 1363886209,
            stackSize: 1,
            itemId: ID,
            characterId: ID,
            membershipType: STEAM,
          }),
        '/Destiny2/Actions/Items/PullFromPostmaster/',
      ],
      [
        () => d2.equipItem(http, { itemId: ID, characterId: ID, membershipType: STEAM }),
        '/Destiny2/Actions/Items/EquipItem/',
      ],
      [
        () => d2.setItemLockState(http, { state: true, itemId: ID, characterId: ID, membershipType: STEAM }),
        '/Destiny2/Actions/Items/SetLockState/',
      ],
      [
        () => d2.equipLoadout(http, { loadoutIndex: 2, characterId: ID, membershipType: STEAM }),
        '/Destiny2/Actions/Loadouts/EquipLoadout/',
      ],
      [() => groups.getGroup(http, { groupId: '881267' }), '/GroupV2/881267/'],
      [
        () => groups.getMembersOfGroup(http, { groupId: '881267', currentpage: 1, nameSearch: 'ä b' }),
        '/GroupV2/881267/Members/',
      ],
      [
        () =>
          groups.getGroupsForMember(http, {
            membershipType: STEAM,
            membershipId: ID,
            filter: 0 as groups.GroupsForMemberFilter,
            groupType: CLAN,
          }),
        `/GroupV2/User/3/${ID}/0/1/`,
      ],
      [
        () => groups.kickMember(http, { groupId: '881267', membershipType: STEAM, membershipId: ID }),
        `/GroupV2/881267/Members/3/${ID}/Kick/`,
      ],
      [
        () => user.getMembershipDataById(http, { membershipId: ID, membershipType: STEAM }),
        `/User/GetMembershipsById/${ID}/3/`,
      ],
      [() => social.getFriendList(http), '/Social/Friends/'],
    ];
    expect(calls).toHaveLength(20);
    for (const [call, upstream] of calls) {
      const before = fake.apiRequests().length;
      const answer = await call();
      const received = fake.apiRequests().slice(before);
      expect(received, upstream).toHaveLength(1);
      expect(received[0]?.path).toBe(`/Platform${upstream}`);
      // (The fake answers a profile in its own shape: authed means the user's token came.)
      const profile = upstream === `/Destiny2/3/Profile/${ID}/`;
      expect(answer.Response).toMatchObject(
        profile ? { authed: true } : { path: `/Platform${upstream}`, user: MEMBER },
      );
    }
    // What bungie-api-ts put in the URL and body reached the upstream as such.
    const search = fake.apiRequests().find((r) => r.path.includes('SearchDestinyPlayerByBungieName'));
    expect(JSON.parse(search?.body ?? '')).toEqual({ displayName: 'Guardian Ä', displayNameCode: 1234 });
    const members = fake.apiRequests().find((r) => r.path === '/Platform/GroupV2/881267/Members/');
    // (bungie-api-ts itself does not send currentpage.)
    expect(Object.fromEntries(members?.query ?? [])).toEqual({ nameSearch: 'ä b' });
    expect(seen.every((s) => s.startsWith('GET /game/') || s.startsWith('POST /game/'))).toBe(true);
  });

  it('the manifest and a definition through bungie-api-ts come from the cache', async () => {
    const http = platformClient(origin, p.adminKey, []);
    const manifest = await d2.getDestinyManifest(http);
    expect(manifest.Response.version).toBe(fake.manifestVersion);
    const def = await d2.getDestinyEntityDefinition(http, {
      entityType: 'DestinyInventoryItemDefinition',
      hashIdentifier: 1363886209,
    });
    expect(def.Response).toMatchObject({ hash: 1363886209, displayProperties: { name: 'Gjallarhorn' } });
  });
});
