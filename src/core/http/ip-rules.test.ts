import { describe, expect, it } from 'vitest';
import {
  cidrsWithin,
  ipMatcher,
  isValidCidr,
  parseCidr,
  rateLimitClient,
  trustProxyOption,
} from './ip-rules.js';

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

  it('an IPv4-mapped IPv6 rule matches the IPv4 client, and the other way round', () => {
    const mapped = ipMatcher(['::ffff:203.0.113.7', '::ffff:198.51.100.0/120']);
    expect(mapped('203.0.113.7')).toBe(true);
    expect(mapped('::ffff:203.0.113.7')).toBe(true);
    expect(mapped('203.0.113.8')).toBe(false);
    expect(mapped('198.51.100.200')).toBe(true);
    expect(mapped('198.51.101.1')).toBe(false);
    expect(ipMatcher(['203.0.113.7'])('::ffff:203.0.113.7')).toBe(true);
    // A plain IPv6 rule still matches only IPv6 clients.
    expect(ipMatcher(['::/0'])('203.0.113.7')).toBe(false);
  });

  it('cidrsWithin: each inner range lies inside one outer range; no rules = any address', () => {
    expect(cidrsWithin(['10.1.2.0/24', '10.9.0.1'], ['10.0.0.0/8'])).toBe(true);
    expect(cidrsWithin(['10.0.0.0/7'], ['10.0.0.0/8'])).toBe(false);
    expect(cidrsWithin(['10.0.0.0/8', '11.0.0.1'], ['10.0.0.0/8'])).toBe(false);
    expect(cidrsWithin([], ['10.0.0.0/8'])).toBe(false);
    expect(cidrsWithin(['0.0.0.0/0'], [])).toBe(true);
    expect(cidrsWithin([], [])).toBe(true);
    expect(cidrsWithin(['::ffff:10.1.1.1'], ['10.0.0.0/8'])).toBe(true);
    expect(cidrsWithin(['2001:db8:1:2::/64'], ['2001:db8::/32'])).toBe(true);
    expect(cidrsWithin(['2001:db8::/32'], ['2001:db8:1::/48'])).toBe(false);
    expect(cidrsWithin(['10.0.0.1'], ['::/0'])).toBe(false);
  });

  it('rateLimitClient: IPv4 as is (mapped ones unmapped), IPv6 by its /64', () => {
    expect(rateLimitClient('203.0.113.7')).toBe('203.0.113.7');
    expect(rateLimitClient('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(rateLimitClient('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(rateLimitClient('2001:0db8:0001:0002:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(rateLimitClient('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
  });

  it('trustProxyOption: false, a hop count (true = 1) or a list of proxies', () => {
    expect(trustProxyOption('false')).toBe(false);
    expect(trustProxyOption(false)).toBe(false);
    expect(trustProxyOption('0')).toBe(false);
    const two = trustProxyOption('2') as (a: string, hop: number) => boolean;
    expect([0, 1, 2].map((hop) => two('10.0.0.1', hop))).toEqual([true, true, false]);
    const one = trustProxyOption('true') as (a: string, hop: number) => boolean;
    expect([0, 1].map((hop) => one('10.0.0.1', hop))).toEqual([true, false]);
    expect(trustProxyOption('10.0.0.0/8, ::1,loopback')).toEqual(['10.0.0.0/8', '::1', 'loopback']);
    for (const bad of ['yes', '1.2.3', '10.0.0.0/33', ',', '-2', '100'])
      expect(() => trustProxyOption(bad), bad).toThrow(/TRUST_PROXY/);
  });
});
