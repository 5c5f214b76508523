import { Type } from 'typebox';

/** Game titles served under `/{game}/…` upstream. */
const GAMES = ['Destiny2'] as const;

/** DestinyComponentType names (bungie-api-ts); numbers are accepted too. */
const COMPONENT_NAMES = [
  'None',
  'Profiles',
  'VendorReceipts',
  'ProfileInventories',
  'ProfileCurrencies',
  'ProfileProgression',
  'PlatformSilver',
  'Characters',
  'CharacterInventories',
  'CharacterProgressions',
  'CharacterRenderData',
  'CharacterActivities',
  'CharacterEquipment',
  'CharacterLoadouts',
  'ItemInstances',
  'ItemObjectives',
  'ItemPerks',
  'ItemRenderData',
  'ItemStats',
  'ItemSockets',
  'ItemTalentGrids',
  'ItemCommonData',
  'ItemPlugStates',
  'ItemPlugObjectives',
  'ItemReusablePlugs',
  'Vendors',
  'VendorCategories',
  'VendorSales',
  'Kiosks',
  'CurrencyLookups',
  'PresentationNodes',
  'Collectibles',
  'Records',
  'Transitory',
  'Metrics',
  'StringVariables',
  'Craftables',
  'SocialCommendations',
] as const;
const COMPONENT = `(?:[0-9]{1,5}|${COMPONENT_NAMES.join('|')})`;

const NumericId = (description: string) =>
  Type.String({ pattern: '^[0-9]{1,20}$', description: `${description} (int64 as a numeric string)` });

const Game = Type.Enum(GAMES, { description: 'Game title' });
const MembershipType = Type.Integer({
  minimum: -1,
  maximum: 254,
  description: 'BungieMembershipType (e.g. 1 Xbox, 2 PSN, 3 Steam, 254 BungieNext)',
});
const Components = Type.String({
  pattern: `^${COMPONENT}(?:,${COMPONENT})*$`,
  maxLength: 1000,
  description: 'Comma-separated DestinyComponentType names or numbers, e.g. Profiles,Characters or 100,200',
});

/** The upstream `Response`, unwrapped; its shape is the game platform's. */
export const UpstreamResponse = Type.Unknown({ description: 'The upstream Response, unwrapped' });

export const ApiUsageParams = Type.Object({ applicationId: NumericId('Application id') });
export const ApiUsageQuery = Type.Object(
  {
    start: Type.Optional(Type.String({ format: 'date-time', description: 'Start of the range (ISO 8601)' })),
    end: Type.Optional(Type.String({ format: 'date-time', description: 'End of the range (ISO 8601)' })),
  },
  { additionalProperties: false },
);

export const ManifestParams = Type.Object({ game: Game });

export const ProfileParams = Type.Object({
  game: Game,
  membershipType: MembershipType,
  membershipId: NumericId('Destiny membership id'),
});
export const ComponentsQuery = Type.Object({ components: Components }, { additionalProperties: false });

export const VendorsParams = Type.Object({
  game: Game,
  membershipType: MembershipType,
  membershipId: NumericId('Destiny membership id'),
  characterId: NumericId('Character id'),
});
export const VendorsQuery = Type.Object(
  {
    components: Components,
    filter: Type.Optional(Type.Integer({ minimum: 0, maximum: 1, description: 'DestinyVendorFilter' })),
  },
  { additionalProperties: false },
);

export const GroupParams = Type.Object({
  groupName: Type.String({
    minLength: 1,
    maxLength: 255,
    // '.' and '..' would be dot segments upstream; every other character is encoded.
    pattern: '^(?!\\.\\.?$)',
    description: "Group name (any characters but the whole name '.' or '..')",
  }),
  groupType: Type.Integer({ minimum: 0, maximum: 1, description: 'GroupType: 0 General, 1 Clan' }),
});

export const ConnectLinkView = Type.Object({
  authorizeUrl: Type.String({
    description:
      'One-time link on this platform to open in the user’s browser: it binds the flow to that browser (cookie) and redirects to the game platform',
  }),
  expiresAt: Type.String({ format: 'date-time' }),
});

/** A key starts a flow for one of its customers (as customer ids are everywhere), or for its account. */
export const AuthorizeQuery = Type.Object(
  {
    customerId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        pattern: '^[A-Za-z0-9_.:@-]+$',
        description:
          "The customer whose connection this is (their customer token then uses it); omitted: the key's account",
      }),
    ),
    sessionBinding: Type.Optional(
      Type.String({
        pattern: '^[0-9a-f]{64}$',
        description:
          "SHA-256 (lowercase hex) of a secret kept in your user's session; required with customerId. Only that session can complete the connection (POST /game/oauth/complete), so a forwarded link connects nobody",
      }),
    ),
    returnUrl: Type.Optional(
      Type.String({
        maxLength: 2048,
        pattern: '^https?://[^\\s]+$',
        description:
          'Where the browser returns after the game platform, with `gameConnection=<id>` added (required with sessionBinding)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CompleteBody = Type.Object(
  {
    completion: Type.String({
      pattern: '^gcomp_[0-9a-z]{26}$',
      description: 'The `gameConnection` the browser brought back to your return URL',
    }),
    sessionSecret: Type.String({
      minLength: 1,
      maxLength: 512,
      description:
        'The secret kept in the session of the user who came back (its SHA-256 was sessionBinding)',
    }),
  },
  { additionalProperties: false },
);

export const StartQuery = Type.Object(
  { ticket: Type.String({ pattern: '^[A-Za-z0-9_-]{43}$', description: 'The one-time ticket of the link' }) },
  { additionalProperties: false },
);

export const CallbackQuery = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 2048 }),
    state: Type.String({ minLength: 1, maxLength: 512 }),
  },
  { additionalProperties: true },
);

export const ConnectionView = Type.Object({
  connected: Type.Literal(true),
  membershipId: Type.String(),
  accessExpiresAt: Type.String({ format: 'date-time' }),
  refreshExpiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
