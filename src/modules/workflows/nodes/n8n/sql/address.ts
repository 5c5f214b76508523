import { OutboundBlockedError } from '../../../../../core/http/outbound.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import { portOf } from './bounds.js';

/** The outbound guard for TCP clients: the address `host:port` may be reached at, or a refusal. */
export type AddressOf = (host: string, port: number) => Promise<string>;

/**
 * Where a database or Redis node connects for its credential: the address the outbound guard
 * answered for the credential's host and port (default `defaultPort`); a refusal is the node's error.
 */
export async function guardedAddress(
  credential: Record<string, string | undefined>,
  addressOf: AddressOf | undefined,
  defaultPort: number,
  nodes: string,
): Promise<{ address: string; port: number }> {
  if (!addressOf) throw new NodeOperationError(`${nodes} nodes are not available here (no outbound guard)`);
  const port = portOf(credential.port, defaultPort);
  try {
    return { address: await addressOf(credential.host ?? '', port), port };
  } catch (err) {
    if (err instanceof OutboundBlockedError) throw new NodeOperationError(err.message);
    throw err;
  }
}
