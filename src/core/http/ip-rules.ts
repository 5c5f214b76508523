import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses one CIDR (or bare address) into a range; throws on a malformed value. */
export function parseCidr(value: string): Range {
  if (value.includes('/')) return ipaddr.parseCIDR(value);
  const address = ipaddr.parse(value);
  return [address, address.kind() === 'ipv4' ? 32 : 128];
}

export function isValidCidr(value: string): boolean {
  try {
    parseCidr(value);
    return true;
  } catch {
    return false;
  }
}

/** Builds a matcher for a list of CIDRs; IPv4-mapped IPv6 clients match IPv4 rules. */
export function ipMatcher(cidrs: readonly string[]): (ip: string) => boolean {
  const ranges = cidrs.map(parseCidr);
  return (ip: string) => {
    let address: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      address = ipaddr.process(ip);
    } catch {
      return false;
    }
    return ranges.some(
      ([range, bits]) => range.kind() === address.kind() && address.match([range, bits] as never),
    );
  };
}
