import { GRANT_TYPES, type GrantType, OAUTH2_PRESETS, type OAuth2Preset, type OAuth2Type } from './types.js';

/** An OAuth2 credential as a flow uses it: the type's fixed values over the account's fields. */
export interface OAuth2Config {
  grantType: GrantType;
  authUrl: string;
  accessTokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string;
  authQueryParameters: string;
  /** n8n's client authentication at the token endpoint: Basic header, or id and secret in the body. */
  authentication: 'header' | 'body';
  /** The status that means "token expired" (n8n's tokenExpiredStatusCode; some APIs answer 403). */
  tokenExpiredStatusCode: number;
  /** Extra form fields of a client-credentials token request (n8n's additionalBodyProperties). */
  additionalBody: Record<string, string>;
}

const LINEAR_SCOPE = 'read write issues:create comments:create';

/** The effective configuration; `problems` lists what is missing or malformed (empty: usable). */
export function oauth2Config(
  type: OAuth2Type,
  data: Record<string, string>,
): { config: OAuth2Config; problems: Array<{ field: string; message: string }> } {
  const preset = OAUTH2_PRESETS[type];
  const fixed = preset as Record<string, unknown>;
  const pick = (field: string): string => {
    const own = data[field];
    const given = typeof own === 'string' && own !== '' ? own : undefined;
    const set = typeof fixed[field] === 'string' ? (fixed[field] as string) : undefined;
    if (set === undefined) return given ?? '';
    return preset.editable?.includes(field) && given !== undefined ? given : set;
  };
  let scope = pick('scope');
  let authQueryParameters = pick('authQueryParameters');
  if (preset.fields?.includes('customScopes') && data.customScopes === 'true' && data.enabledScopes)
    scope = data.enabledScopes;
  if (type === 'linearOAuth2Api') {
    scope = data.includeAdminScope === 'true' ? `${LINEAR_SCOPE} admin` : LINEAR_SCOPE;
    authQueryParameters = `actor=${data.actor || 'user'}`;
  }
  const problems: Array<{ field: string; message: string }> = [];
  const grantType = (pick('grantType') || 'authorizationCode') as GrantType;
  if (!GRANT_TYPES.includes(grantType))
    problems.push({ field: 'data.grantType', message: `must be one of ${GRANT_TYPES.join(', ')}` });
  const authentication = (pick('authentication') || 'header') as 'header' | 'body';
  if (authentication !== 'header' && authentication !== 'body')
    problems.push({ field: 'data.authentication', message: "must be 'header' or 'body'" });
  /** Adds the field's problem, if any; true when there was one. */
  const urlProblem = (field: string, value: string): boolean => {
    let message: string | null = null;
    if (value === '') message = 'is required';
    else if (!URL.canParse(value) || !['https:', 'http:'].includes(new URL(value).protocol))
      message = 'must be an http(s) URL';
    if (message !== null) problems.push({ field: `data.${field}`, message });
    return message !== null;
  };
  const accessTokenUrl = pick('accessTokenUrl');
  urlProblem('accessTokenUrl', accessTokenUrl);
  const authUrl = pick('authUrl');
  if (grantType !== 'clientCredentials' && !urlProblem('authUrl', authUrl))
    presetHostProblem(preset, authUrl, problems);
  const clientSecret = data.clientSecret ?? '';
  // A PKCE client may be public (no secret); the other grants authenticate the client.
  if (grantType !== 'pkce' && clientSecret === '')
    problems.push({ field: 'data.clientSecret', message: `is required for grant type ${grantType}` });
  const status = data.tokenExpiredStatusCode === undefined ? 401 : Number(data.tokenExpiredStatusCode);
  if (!Number.isInteger(status) || status < 400 || status > 599)
    problems.push({ field: 'data.tokenExpiredStatusCode', message: 'must be an HTTP status 400-599' });
  let additionalBody: Record<string, string> = {};
  if (data.sendAdditionalBodyProperties === 'true' && data.additionalBodyProperties) {
    try {
      additionalBody = flatStrings(JSON.parse(data.additionalBodyProperties));
    } catch {
      problems.push({
        field: 'data.additionalBodyProperties',
        message: 'must be a JSON object of strings, numbers or booleans',
      });
    }
  }
  return {
    config: {
      grantType,
      authUrl,
      accessTokenUrl,
      clientId: data.clientId ?? '',
      clientSecret,
      scope,
      authQueryParameters,
      authentication,
      tokenExpiredStatusCode: status,
      additionalBody,
    },
    problems,
  };
}

/**
 * A service type whose authorize URL the account may change (Microsoft's tenant URLs) keeps it on the
 * type's own host: the start link sends a browser there, so a typed credential cannot point it at a
 * page of the account's choosing.
 */
function presetHostProblem(
  preset: OAuth2Preset,
  authUrl: string,
  problems: Array<{ field: string; message: string }>,
): void {
  if (preset.authUrl === undefined || authUrl === preset.authUrl) return;
  const host = new URL(preset.authUrl).host;
  if (new URL(authUrl).host !== host || !authUrl.startsWith('https:'))
    problems.push({
      field: 'data.authUrl',
      message: `must be an https URL on ${host} (the type's provider)`,
    });
}

/**
 * Whether tokens got with one configuration are still the credential's under another: the same
 * client, endpoints, grant and scope (n8n drops them otherwise; a token URL could now point elsewhere).
 */
export function sameClient(before: OAuth2Config, after: OAuth2Config): boolean {
  return (['clientId', 'accessTokenUrl', 'authUrl', 'grantType', 'scope'] as const).every(
    (f) => before[f] === after[f],
  );
}

/** A JSON object of scalars as form fields; anything else throws. */
function flatStrings(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'object' && v !== null) throw new Error('nested');
    if (k === '__proto__') continue;
    out[k] = String(v);
  }
  return out;
}
