import { isOAuth2Type } from '../../../credentials/oauth2/types.js';
import type { NodeExecutionContext } from '../../../engine/node-type.js';
import type { OutboundRequest, OutboundResponse } from '../../../engine/types.js';
import type { AppliedCredential, PreparedRequest } from './build.js';

/**
 * n8n's OAuth2 credentials on the HTTP Request node: the generic `oAuth2Api` (n8n passes
 * `tokenType: 'Bearer'`, so always a Bearer header) and the service types (their token's type: a
 * bearer token as a header, another as an `access_token` query parameter, as n8n's client signs).
 */
export const isOAuth2Credential = isOAuth2Type;

/** The credential as the request applies it: the access token, and how to renew it. */
export async function oauth2Credential(
  ctx: Pick<NodeExecutionContext<unknown>, 'oauth2Token'>,
  type: string,
  id: string,
): Promise<AppliedCredential> {
  const token = await ctx.oauth2Token(id, false);
  return {
    type,
    data: { accessToken: token.accessToken },
    oauth2: {
      tokenType: type === 'oAuth2Api' ? 'bearer' : token.tokenType,
      expiredStatus: token.tokenExpiredStatusCode,
      renew: async () => {
        const next = await ctx.oauth2Token(id, true);
        return next.accessToken;
      },
    },
  };
}

/** n8n's token `sign`: a Bearer header, or the token in the query with no-store (other token types). */
export function signOAuth2(
  req: PreparedRequest,
  accessToken: string,
  tokenType: string,
  header: (name: string, value: string) => void,
): void {
  if (tokenType === 'bearer') {
    header('authorization', `Bearer ${accessToken}`);
    return;
  }
  req.qs.access_token = accessToken;
  req.headers.pragma = 'no-store';
  req.headers['cache-control'] = 'no-store';
}

/**
 * Sends through `http`; when an OAuth2 credential's request gets the expired status, renews the
 * token and sends once more with it (n8n's refresh on 401). Later items use the new token.
 */
export async function sendSigned(
  http: (req: OutboundRequest) => Promise<OutboundResponse>,
  req: OutboundRequest,
  credential: AppliedCredential | null,
): Promise<OutboundResponse> {
  const res = await http(req);
  const oauth2 = credential?.oauth2;
  if (!oauth2 || res.status !== oauth2.expiredStatus) return res;
  const old = credential.data.accessToken ?? '';
  const fresh = await oauth2.renew();
  // The old token stays among the credential's values: an error that echoes it is still redacted.
  credential.data = { ...credential.data, accessToken: fresh, previousAccessToken: old };
  return http(resigned(req, old, fresh));
}

function resigned(req: OutboundRequest, old: string, fresh: string): OutboundRequest {
  const headers = { ...req.headers };
  for (const name of Object.keys(headers))
    if (name.toLowerCase() === 'authorization' && headers[name] === `Bearer ${old}`)
      headers[name] = `Bearer ${fresh}`;
  const url = new URL(req.url);
  if (url.searchParams.get('access_token') === old) url.searchParams.set('access_token', fresh);
  return { ...req, headers, url: url.searchParams.has('access_token') ? url.toString() : req.url };
}
