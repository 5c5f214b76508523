/**
 * n8n's OAuth2 credential types: the generic `oAuth2Api` and the service types that extend it. A
 * service type fixes what n8n's credential file hides (its provider's URLs, scopes, query parameters
 * and client authentication); the account gives the client id and secret. The Google family shares
 * googleOAuth2Api's URLs with scopes of its own, as n8n's files define them.
 */

export type GrantType = 'authorizationCode' | 'clientCredentials' | 'pkce';
export const GRANT_TYPES: readonly GrantType[] = ['authorizationCode', 'clientCredentials', 'pkce'];

/** What a type fixes (n8n's `hidden` properties); `editable` fields keep the account's value when given. */
export interface OAuth2Preset {
  grantType?: GrantType;
  authUrl?: string;
  accessTokenUrl?: string;
  scope?: string;
  authQueryParameters?: string;
  authentication?: 'header' | 'body';
  /** Fields of the preset the account may override (n8n shows them, with the preset as default). */
  editable?: readonly string[];
  /** The type's own extra fields (optional). */
  fields?: readonly string[];
}

const GOOGLE: OAuth2Preset = {
  grantType: 'authorizationCode',
  authUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
  accessTokenUrl: 'https://oauth2.googleapis.com/token',
  authQueryParameters: 'access_type=offline&prompt=consent',
  authentication: 'body',
};
const google = (scopes: string[], customScopes = false): OAuth2Preset => ({
  ...GOOGLE,
  scope: scopes.join(' '),
  // Gmail and Docs let the account replace the scopes (n8n's customScopes / enabledScopes).
  ...(customScopes ? { fields: ['customScopes', 'enabledScopes'] } : {}),
});
const MICROSOFT: OAuth2Preset = {
  grantType: 'authorizationCode',
  authUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
  accessTokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
  authQueryParameters: 'response_mode=query',
  authentication: 'body',
  // A tenant's own endpoints replace `common` (n8n shows both URLs).
  editable: ['authUrl', 'accessTokenUrl'],
};

export const OAUTH2_TYPE_NAMES = [
  'oAuth2Api',
  'googleOAuth2Api',
  'googleSheetsOAuth2Api',
  'googleDriveOAuth2Api',
  'googleCalendarOAuth2Api',
  'googleDocsOAuth2Api',
  'gmailOAuth2',
  'youTubeOAuth2Api',
  'googleAdsOAuth2Api',
  'googleSlidesOAuth2Api',
  'hubspotOAuth2Api',
  'microsoftOAuth2Api',
  'microsoftOutlookOAuth2Api',
  'spotifyOAuth2Api',
  'zoomOAuth2Api',
  'linearOAuth2Api',
] as const;
export type OAuth2Type = (typeof OAUTH2_TYPE_NAMES)[number];

export const OAUTH2_PRESETS: Readonly<Record<OAuth2Type, OAuth2Preset>> = {
  oAuth2Api: {},
  // googleOAuth2Api: the scope is the account's (the HTTP Request node calls any Google API).
  googleOAuth2Api: GOOGLE,
  googleSheetsOAuth2Api: google([
    'https://www.googleapis.com/auth/drive.file',
    'https://www.googleapis.com/auth/spreadsheets',
  ]),
  googleDriveOAuth2Api: google([
    'https://www.googleapis.com/auth/drive',
    'https://www.googleapis.com/auth/drive.appdata',
    'https://www.googleapis.com/auth/drive.photos.readonly',
  ]),
  googleCalendarOAuth2Api: google([
    'https://www.googleapis.com/auth/calendar',
    'https://www.googleapis.com/auth/calendar.events',
  ]),
  googleDocsOAuth2Api: google(
    [
      'https://www.googleapis.com/auth/documents',
      'https://www.googleapis.com/auth/drive',
      'https://www.googleapis.com/auth/drive.file',
    ],
    true,
  ),
  gmailOAuth2: google(
    [
      'https://www.googleapis.com/auth/gmail.labels',
      'https://www.googleapis.com/auth/gmail.addons.current.action.compose',
      'https://www.googleapis.com/auth/gmail.addons.current.message.action',
      'https://mail.google.com/',
      'https://www.googleapis.com/auth/gmail.modify',
      'https://www.googleapis.com/auth/gmail.compose',
    ],
    true,
  ),
  youTubeOAuth2Api: google([
    'https://www.googleapis.com/auth/youtube',
    'https://www.googleapis.com/auth/youtubepartner',
    'https://www.googleapis.com/auth/youtube.force-ssl',
    'https://www.googleapis.com/auth/youtube.upload',
    'https://www.googleapis.com/auth/youtubepartner-channel-audit',
  ]),
  googleAdsOAuth2Api: { ...google(['https://www.googleapis.com/auth/adwords']), fields: ['developerToken'] },
  googleSlidesOAuth2Api: google([
    'https://www.googleapis.com/auth/drive.file',
    'https://www.googleapis.com/auth/presentations',
  ]),
  hubspotOAuth2Api: {
    grantType: 'authorizationCode',
    authUrl: 'https://app.hubspot.com/oauth/authorize',
    accessTokenUrl: 'https://api.hubapi.com/oauth/v1/token',
    scope: [
      'crm.schemas.deals.read',
      'crm.objects.owners.read',
      'crm.objects.contacts.write',
      'crm.objects.companies.write',
      'crm.objects.companies.read',
      'crm.objects.deals.read',
      'crm.schemas.contacts.read',
      'crm.objects.deals.write',
      'crm.objects.contacts.read',
      'crm.schemas.companies.read',
      'forms',
      'tickets',
    ].join(' '),
    authQueryParameters: 'grant_type=authorization_code',
    authentication: 'body',
  },
  microsoftOAuth2Api: { ...MICROSOFT, editable: [...(MICROSOFT.editable ?? []), 'scope'] },
  microsoftOutlookOAuth2Api: {
    ...MICROSOFT,
    scope:
      'openid offline_access Mail.ReadWrite Mail.ReadWrite.Shared Mail.Send Mail.Send.Shared MailboxSettings.Read',
    fields: ['useShared', 'userPrincipalName'],
  },
  spotifyOAuth2Api: {
    grantType: 'authorizationCode',
    authUrl: 'https://accounts.spotify.com/authorize',
    accessTokenUrl: 'https://accounts.spotify.com/api/token',
    scope:
      'user-read-playback-state playlist-read-collaborative user-modify-playback-state playlist-modify-public user-read-currently-playing playlist-read-private user-read-recently-played playlist-modify-private',
    authQueryParameters: 'response_type=code',
    authentication: 'header',
    fields: ['server'],
  },
  zoomOAuth2Api: {
    grantType: 'authorizationCode',
    authUrl: 'https://zoom.us/oauth/authorize',
    accessTokenUrl: 'https://zoom.us/oauth/token',
    scope: '',
    authQueryParameters: '',
    authentication: 'header',
  },
  linearOAuth2Api: {
    grantType: 'authorizationCode',
    authUrl: 'https://linear.app/oauth/authorize',
    accessTokenUrl: 'https://api.linear.app/oauth/token',
    authentication: 'body',
    // scope and authQueryParameters follow `includeAdminScope` and `actor` (linearPreset below).
    fields: ['actor', 'includeAdminScope', 'signingSecret'],
  },
};

export const isOAuth2Type = (type: unknown): type is OAuth2Type =>
  typeof type === 'string' && Object.hasOwn(OAUTH2_PRESETS, type);

/** n8n's oAuth2Api fields an account may set (besides each type's own); `oauthTokenData` is the platform's. */
export const OAUTH2_FIELDS = [
  'grantType',
  'authUrl',
  'accessTokenUrl',
  'clientId',
  'clientSecret',
  'scope',
  'authQueryParameters',
  'authentication',
  'tokenExpiredStatusCode',
  'sendAdditionalBodyProperties',
  'additionalBodyProperties',
] as const;

/** Where the platform keeps the token answer on the credential, sealed with the rest (n8n's name). */
export const TOKEN_DATA_FIELD = 'oauthTokenData';

/** Each OAuth2 type's required fields (the credential store's CREDENTIAL_TYPES shape). */
export const OAUTH2_CREDENTIAL_TYPES = Object.fromEntries(
  OAUTH2_TYPE_NAMES.map((t) => [t, ['clientId']]),
) as unknown as Record<OAuth2Type, readonly ['clientId']>;

/** Each OAuth2 type's optional fields. */
export const OAUTH2_OPTIONAL_FIELDS = Object.fromEntries(
  Object.entries(OAUTH2_PRESETS).map(([t, preset]) => [
    t,
    [...OAUTH2_FIELDS.filter((f) => f !== 'clientId'), ...(preset.fields ?? []), TOKEN_DATA_FIELD],
  ]),
) as unknown as Record<OAuth2Type, readonly string[]>;
