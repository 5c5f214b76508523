import ipaddr from 'ipaddr.js';
import { ConfigError } from '../../config.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses one CIDR (or bare address) into a range; throws on a malformed value. */
export function parseCidr(value: string): Range {
  // ipaddr.js also takes '10.1', '3' or octal '010.0.0.1' (= 8.0.0.1): allow only the
  // dotted-quad IPv4 people mean, and a plain decimal prefix length.
  const [address = '', bits, ...rest] = value.split('/');
  const plainBits = bits === undefined || /^(0|[1-9]\d{0,2})$/.test(bits);
  const plainAddress = address.includes(':')
    ? ipaddr.IPv6.isValid(address)
    : ipaddr.IPv4.isValidFourPartDecimal(address);
  if (rest.length > 0 || !plainBits || !plainAddress)
    throw new Error(`'${value}' is not an IP address or CIDR`);
  if (bits !== undefined) return ipaddr.parseCIDR(value);
  const parsed = ipaddr.parse(address);
  return [parsed, parsed.kind() === 'ipv4' ? 32 : 128];
}

/**
 * A range in the family clients are compared in: an IPv4-mapped IPv6 rule (`::ffff:a.b.c.d`,
 * prefix 96 or longer) is the IPv4 range it maps, since clients are unmapped the same way.
 */
function normalRange(value: string): Range {
  const [address, bits] = parseCidr(value);
  if (address.kind() === 'ipv6' && bits >= 96 && (address as ipaddr.IPv6).isIPv4MappedAddress())
    return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96];
  return [address, bits];
}

export function isValidCidr(value: string): boolean {
  try {
    parseCidr(value);
    return true;
  } catch {
    return false;
  }
}

function clientAddress(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  try {
    return ipaddr.process(ip);
  } catch {
    return null;
  }
}

function inRange(address: ipaddr.IPv4 | ipaddr.IPv6, [range, bits]: Range): boolean {
  return range.kind() === address.kind() && address.match([range, bits] as never);
}

/** Builds a matcher for a list of CIDRs; IPv4-mapped IPv6 clients and rules match IPv4 ones. */
export function ipMatcher(cidrs: readonly string[]): (ip: string) => boolean {
  const ranges = cidrs.map(normalRange);
  return (ip: string) => {
    const address = clientAddress(ip);
    return address !== null && ranges.some((range) => inRange(address, range));
  };
}

/**
 * Whether every address `inner` allows is allowed by `outer` (an empty list allows any address):
 * each CIDR of `inner` lies inside one CIDR of `outer`. Both lists must be valid.
 */
export function cidrsWithin(inner: readonly string[], outer: readonly string[]): boolean {
  if (outer.length === 0) return true;
  if (inner.length === 0) return false;
  const outerRanges = outer.map(normalRange);
  return inner
    .map(normalRange)
    .every(([address, bits]) => outerRanges.some((range) => bits >= range[1] && inRange(address, range)));
}

/**
 * The client an address counts as for per-IP limits: an IPv4 address (mapped ones unmapped), or
 * the /64 of an IPv6 address, since one IPv6 host usually holds a whole /64.
 */
export function rateLimitClient(ip: string): string {
  if (!ip.includes(':')) return ip;
  const address = clientAddress(ip);
  if (!address) return ip;
  if (address.kind() === 'ipv4') return address.toString();
  const parts = (address as ipaddr.IPv6).parts;
  return `${parts
    .slice(0, 4)
    .map((p) => p.toString(16))
    .join(':')}::/64`;
}

const PROXY_PRESETS = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * Fastify's `trustProxy` from the TRUST_PROXY setting: `false` (default) trusts nothing; a hop
 * count trusts that many proxies in front of the server (the client is the address that many
 * entries from the right of X-Forwarded-For); a comma list trusts those proxy addresses or CIDRs
 * (or proxy-addr's `loopback`, `linklocal`, `uniquelocal`). `true` would trust every hop, so the
 * left-most, client-written entry: it means one hop here. Throws ConfigError on anything else.
 */
export function trustProxyOption(
  value: string | boolean,
): false | string[] | ((address: string, hop: number) => boolean) {
  const text = String(value).trim().toLowerCase();
  if (text === '' || text === 'false' || text === '0') return false;
  // Fastify 5 takes a number as "trust nothing"; a hop count is proxy-addr's (address, hop) test.
  const hops = text === 'true' ? 1 : /^[1-9]\d?$/.test(text) ? Number(text) : 0;
  if (hops > 0) return (_address, hop) => hop < hops;
  const entries = String(value)
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  const bad = entries.filter((e) => !PROXY_PRESETS.has(e) && !isValidCidr(e));
  if (entries.length === 0 || bad.length > 0)
    throw new ConfigError(
      `TRUST_PROXY must be false, a hop count (1-99) or a comma list of proxy addresses or CIDRs; not ${bad.join(', ') || 'empty'}`,
    );
  return entries;
}

/** A private, loopback or link-local address: where a reverse proxy in front of us would be. */
export function isPrivateAddress(ip: string): boolean {
  const address = clientAddress(ip);
  if (!address) return false;
  const range = address.range();
  return ['private', 'loopback', 'linkLocal', 'uniqueLocal', 'carrierGradeNat'].includes(range);
}
