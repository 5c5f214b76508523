import { describe, expect, it } from 'vitest';
import { TenantTurns } from './tenant-turns.js';

describe('TenantTurns', () => {
  it('serves tenants in turn, keeps a skipped tenant in place, and counts what waits', () => {
    const turns = new TenantTurns<string>();
    for (const item of ['a1', 'a2', 'a3']) turns.push('a', item);
    turns.push('b', 'b1');
    turns.push('c', 'c1');
    expect(turns.waiting).toBe(5);
    expect(turns.take()).toEqual({ tenant: 'a', item: 'a1' });
    // b is skipped (at its share): c goes, b keeps its place ahead of a.
    expect(turns.take((t) => t === 'b')?.item).toBe('c1');
    expect(turns.take()?.item).toBe('b1');
    expect(turns.take((t) => t === 'a')).toBeUndefined();
    expect(turns.waitingFor('a')).toBe(2);
    expect(turns.largest()).toEqual({ tenant: 'a', waiting: 2 });
    expect(turns.popNewest('a')).toBe('a3');
    expect(turns.remove('a', 'a2')).toBe(true);
    expect(turns.remove('a', 'a2')).toBe(false);
    expect(turns.waiting).toBe(0);
    expect(turns.largest()).toBeUndefined();
    turns.push('d', 'd1');
    expect(turns.drain()).toEqual(['d1']);
    expect(turns.waiting).toBe(0);
  });

  it('lists tenants in turn order, and admits within a total and a per-tenant bound', () => {
    const turns = new TenantTurns<string>();
    for (const item of ['a1', 'a2', 'a3']) turns.push('a', item);
    turns.push('b', 'b1');
    expect(turns.tenants()).toEqual(['a', 'b']);
    turns.take();
    expect(turns.tenants()).toEqual(['b', 'a']);
    // Per tenant: a (2 waiting) is at its bound of 2, b is not.
    expect(turns.admit('a', 10, 2)).toEqual({ admitted: false });
    expect(turns.admit('b', 10, 2)).toEqual({ admitted: true });
    // All full (3 of 3): c's first item takes the place of a's newest; a itself is refused.
    expect(turns.admit('c', 3)).toEqual({ admitted: true, evicted: 'a3' });
    expect(turns.waitingFor('a')).toBe(1);
    turns.push('c', 'c1');
    expect(turns.admit('a', 3)).toEqual({ admitted: false });
    // Nobody holds more than b would after its next item: refused rather than evicting.
    expect(turns.admit('b', 3)).toEqual({ admitted: false });
  });
});
