import { type NodeExecutionContext, NodeOperationError } from '../../../engine/node-type.js';
import { credentialRefOf } from '../../../engine/types.js';

/** The node's credential of `type` (n8n's `getCredentials(type)`), decrypted. */
export async function nodeCredential(
  ctx: NodeExecutionContext<unknown>,
  type: string,
): Promise<Record<string, string | undefined>> {
  const ref = credentialRefOf(ctx.node.credentials?.[type]);
  if (!ref) throw new NodeOperationError(`Node does not have any credentials set for "${type}"`);
  return ctx.credential(ref);
}
