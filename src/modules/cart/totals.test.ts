import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocate, computeTotals } from './totals.js';

const line = fc.record({
  unitPrice: fc.integer({ min: 0, max: 500_000 }),
  quantity: fc.integer({ min: 1, max: 99 }),
  wrapFee: fc.constantFrom(0, 499, 500),
});

describe('cart totals (property tests on random carts)', () => {
  it('are never negative, equal the sum of their lines, and the discount never exceeds the subtotal', () => {
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 20 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.double({ min: 0, max: 0.3, noNaN: true }),
        (lines, discount, rate) => {
          const t = computeTotals(lines, discount, rate);
          expect(t.subtotal).toBe(t.lineAmounts.reduce((a, b) => a + b, 0));
          expect(t.estimatedTax).toBe(t.lineTaxes.reduce((a, b) => a + b, 0));
          expect(t.discountTotal).toBeLessThanOrEqual(t.subtotal);
          expect(t.discountTotal).toBeGreaterThanOrEqual(0);
          for (const v of [t.subtotal, t.estimatedTax, t.estimatedTotal, ...t.lineTaxes]) {
            expect(v).toBeGreaterThanOrEqual(0);
            expect(Number.isInteger(v)).toBe(true);
          }
          expect(t.estimatedTotal).toBe(t.subtotal - t.discountTotal + t.estimatedTax);
          expect(t.itemCount).toBe(lines.reduce((a, l) => a + l.quantity, 0));
        },
      ),
    );
  });

  it('allocation splits exactly, in proportion, within one unit of the exact share', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 1, maxLength: 30 }),
        (total, weights) => {
          const parts = allocate(total, weights);
          const sum = weights.reduce((a, b) => a + b, 0);
          expect(parts.reduce((a, b) => a + b, 0)).toBe(sum === 0 ? 0 : total);
          parts.forEach((part, i) => {
            const exact = sum === 0 ? 0 : (total * (weights[i] ?? 0)) / sum;
            expect(Math.abs(part - exact)).toBeLessThan(1);
          });
        },
      ),
    );
  });
});
