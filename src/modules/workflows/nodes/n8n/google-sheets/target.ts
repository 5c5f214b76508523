import { type NodeExecutionContext, NodeOperationError } from '../../../engine/node-type.js';
import { credentialRefOf } from '../../../engine/types.js';
import { serviceAccountOf, serviceAccountToken } from './service-account.js';
import type { GoogleTarget } from './transport.js';

/**
 * Where the node's calls go with which token, by its `authentication`: a service account (`googleApi`,
 * n8n v1's default) or OAuth2 (`googleSheetsOAuth2Api`, the default from v2 on).
 */
export async function googleTarget(
  ctx: NodeExecutionContext<unknown>,
  authentication: string | undefined,
): Promise<GoogleTarget> {
  const version = ctx.node.typeVersion ?? 1;
  const mode = authentication ?? (version < 2 ? 'serviceAccount' : 'oAuth2');
  const slot = mode === 'serviceAccount' ? 'googleApi' : 'googleSheetsOAuth2Api';
  const id = credentialRefOf(ctx.node.credentials?.[slot]);
  if (!id) throw new NodeOperationError(`Node does not have any credentials set for "${slot}"`);
  const base = { http: ctx.deps.http, deadlineAt: ctx.deadlineAt };
  if (mode === 'serviceAccount') {
    const account = serviceAccountOf(await ctx.credential(id));
    return {
      ...base,
      renewable: false,
      bearer: () => serviceAccountToken(ctx.deps, account, ctx.deadlineAt),
    };
  }
  // The instance's OAuth2 credentials (checked for the workflow as `credential` is); `renew` after
  // Google refused the current token.
  return {
    ...base,
    renewable: true,
    bearer: async (renew) => (await ctx.oauth2Token(id, renew)).accessToken,
  };
}
