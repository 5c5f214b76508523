import type { NodeExecutionContext } from '../../../engine/node-type.js';

/**
 * The access token of an OAuth2 credential (`googleSheetsOAuth2Api`) by id, from the instance's OAuth2
 * credentials (checked for the workflow as `credential` is); `renew` asks for a new one after Google
 * refused the current one.
 */
export async function oauth2Bearer(
  ctx: Pick<NodeExecutionContext<unknown>, 'oauth2Token'>,
  credentialId: string,
  renew: boolean,
): Promise<string> {
  return (await ctx.oauth2Token(credentialId, renew)).accessToken;
}
