import { describe, expect, it } from 'vitest';
import { ipMatcher, isValidCidr, parseCidr } from './ip-rules.js';

describe('ip rules', () => {
  it('matches IPv4 CIDRs, bare addresses and IPv4-mapped IPv6 clients', () => {
    const allowed = ipMatcher(['10.1.0.0/16', '192.0.2.5']);
    expect(allowed('10.1.255.254')).toBe(true);
    expect(allowed('10.2.0.1')).toBe(false);
    expect(allowed('192.0.2.5')).toBe(true);
    expect(allowed('192.0.2.6')).toBe(false);
    expect(allowed('::ffff:10.1.3.4')).toBe(true);
    expect(allowed('::ffff:10.9.3.4')).toBe(false);
  });

  it('matches IPv6 CIDRs and bare IPv6 addresses, never across families', () => {
    const allowed = ipMatcher(['2001:db8:abcd::/48', 'fe80::1']);
    expect(allowed('2001:db8:abcd:12::9')).toBe(true);
    expect(allowed('2001:db8:abce::1')).toBe(false);
    expect(allowed('fe80::1')).toBe(true);
    expect(allowed('fe80::2')).toBe(false);
    expect(allowed('10.0.0.1')).toBe(false);
    expect(ipMatcher(['0.0.0.0/0'])('2001:db8::1')).toBe(false);
    expect(ipMatcher(['::/0'])('2001:db8::1')).toBe(true);
  });

  it('refuses garbage clients and validates rule syntax', () => {
    expect(ipMatcher(['0.0.0.0/0'])('not-an-ip')).toBe(false);
    expect(ipMatcher(['0.0.0.0/0'])('')).toBe(false);
    for (const good of ['10.0.0.0/8', '1.2.3.4', '::1', '2001:db8::/32', '0.0.0.0/0'])
      expect(isValidCidr(good), good).toBe(true);
    for (const bad of [
      '3',
      '10.1',
      '010.0.0.1',
      '0x7f.0.0.1',
      '1.2.3.4/08',
      '1.2.3.4/8/8',
      '10.0.0.0/33',
      '2001:db8::/129',
      '300.1.1.1',
      'example.com',
      '10.0.0.0/',
      '/8',
      '',
    ])
      expect(isValidCidr(bad), bad).toBe(false);
    expect(parseCidr('1.2.3.4')[1]).toBe(32);
    expect(parseCidr('::1')[1]).toBe(128);
  });
});
