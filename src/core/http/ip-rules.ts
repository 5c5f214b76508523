import ipaddr from 'ipaddr.js';

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
