import { checkedTcpTarget } from './outbound.js';

/** Where a TCP client (SMTP, IMAP, a database) may connect: the checked address, and the name for TLS. */
export interface OutboundTarget {
  /** The resolved address to connect to (connect here, not to the name: no second DNS answer). */
  address: string;
  /** The host as given, for TLS SNI and certificate checks. */
  servername: string;
}

/** Checks a host and port before a non-HTTP client connects; throws OutboundBlockedError. */
export type OutboundHostGuard = (host: string, port: number) => Promise<OutboundTarget>;

/**
 * The outbound-address rule of `createOutboundHttp` for protocols other than HTTP (`checkedTcpTarget`):
 * the host resolves, and none of its addresses is private or internal unless `allowHosts` names the
 * host (or host:port). Keeps the name as given for TLS.
 */
export function createOutboundHostGuard(options: { allowHosts: string[] }): OutboundHostGuard {
  return async (rawHost, port) => {
    const { address } = await checkedTcpTarget(rawHost, port, options.allowHosts);
    return { address, servername: rawHost.trim() };
  };
}
