import { NodeOperationError } from '../../engine/node-type.js';
import { credentialRefOf, type WorkflowNode } from '../../engine/types.js';

/**
 * The decrypted data of the node's credential in slot `type` (n8n exports `{type: {id, name}}`, the
 * platform `{type: id}`); a node error naming the slot when none is set.
 */
export async function credentialOf(
  node: WorkflowNode,
  type: string,
  reveal: (id: string) => Promise<Record<string, string>>,
): Promise<Record<string, string>> {
  const id = credentialRefOf(node.credentials?.[type]);
  if (!id) throw new NodeOperationError(`Node does not have any credentials set for "${type}"`);
  return reveal(id);
}
