import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { isBlockedAddress, OutboundBlockedError } from './outbound.js';

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
 * The outbound-address rule of `createOutboundHttp` for protocols other than HTTP: the host resolves,
 * and none of its addresses is private or internal unless `allowHosts` names the host (or host:port).
 */
export function createOutboundHostGuard(options: { allowHosts: string[] }): OutboundHostGuard {
  const allow = new Set(options.allowHosts.map((h) => h.trim().toLowerCase()).filter((h) => h !== ''));
  return async (rawHost, port) => {
    const host = rawHost
      .trim()
      .replace(/^\[|\]$/g, '')
      .toLowerCase();
    if (host === '') throw new OutboundBlockedError('No host given');
    if (!Number.isInteger(port) || port < 1 || port > 65_535)
      throw new OutboundBlockedError(`Port ${port} is not a TCP port`);
    const allowed = allow.has(host) || allow.has(`${host}:${port}`);
    let addresses: Array<{ address: string }>;
    if (ipaddr.isValid(host)) addresses = [{ address: host }];
    else {
      try {
        addresses = await dnsLookup(host, { all: true, verbatim: true });
      } catch {
        throw new OutboundBlockedError(`Host '${host}' does not resolve`);
      }
    }
    const first = addresses[0];
    if (!first) throw new OutboundBlockedError(`Host '${host}' does not resolve`);
    if (!allowed && addresses.some((a) => isBlockedAddress(a.address)))
      throw new OutboundBlockedError(
        `Host '${host}' is not allowed: outbound connections may not reach private or internal addresses`,
      );
    return { address: first.address, servername: rawHost.trim() };
  };
}
