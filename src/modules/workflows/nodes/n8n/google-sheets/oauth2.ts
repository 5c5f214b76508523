import { type NodeExecutionContext, NodeOperationError } from '../../../engine/node-type.js';

/**
 * Where OAuth2 access tokens come from: the engine's token store (by credential id, checked for the
 * workflow as `credential` is; `renew` after the API refused the current token). Instances without
 * one leave it out of the engine's deps.
 */
export interface OAuth2TokenSource {
  oauth2Token?(id: string, workflowId: string, renew: boolean): Promise<{ accessToken: string }>;
}

/**
 * The access token of an OAuth2 credential (`googleSheetsOAuth2Api`) by id; `renew` asks for a new
 * one after Google refused the current one. Without a token store in the engine's deps the node
 * fails here, saying so.
 */
export async function oauth2Bearer(
  ctx: Pick<NodeExecutionContext<unknown>, 'deps' | 'workflow'>,
  credentialId: string,
  renew: boolean,
): Promise<string> {
  const source = ctx.deps as OAuth2TokenSource;
  if (typeof source.oauth2Token !== 'function')
    throw new NodeOperationError('OAuth2 credentials are not available on this instance yet', {
      description:
        'Use a Google service account (the googleApi credential, authentication "serviceAccount") for the Google Sheets node',
    });
  return (await source.oauth2Token(credentialId, ctx.workflow.id, renew)).accessToken;
}
