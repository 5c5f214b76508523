import { describe, expect, it } from 'vitest';
import { prettySize } from './binary.js';

describe('prettySize', () => {
  it("writes sizes as n8n's pretty-bytes does: decimal units, three significant digits", () => {
    expect(prettySize(0)).toBe('0 B');
    expect(prettySize(999)).toBe('999 B');
    expect(prettySize(1000)).toBe('1 kB');
    expect(prettySize(3070)).toBe('3.07 kB');
    expect(prettySize(12_345)).toBe('12.3 kB');
    expect(prettySize(123_456)).toBe('123 kB');
    expect(prettySize(999_999)).toBe('1000 kB');
    expect(prettySize(5_500_000)).toBe('5.5 MB');
    expect(prettySize(2_000_000_000)).toBe('2 GB');
  });
});
