import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocate, computeTotals, roundDiv } from './totals.js';

const line = fc.record({
  unitPrice: fc.integer({ min: 0, max: 500_000 }),
  quantity: fc.integer({ min: 1, max: 99 }),
  wrapFee: fc.constantFrom(0, 499, 500),
});

describe('rounding', () => {
  it('rounds tax half away from zero exactly, where binary fractions would not', () => {
    // 200 × 7.25 % = 14.5 → 15; 3000 × 7.25 % = 217.5 → 218 (floating point gives 14 and 217).
    expect(computeTotals([{ unitPrice: 200, quantity: 1, wrapFee: 0 }], 0, 0.0725).estimatedTax).toBe(15);
    expect(computeTotals([{ unitPrice: 3000, quantity: 1, wrapFee: 0 }], 0, 0.0725).estimatedTax).toBe(218);
    expect(roundDiv(5, 2)).toBe(3);
    expect(roundDiv(-5, 2)).toBe(-3);
    expect(roundDiv(4, 3)).toBe(1);
  });

  it('matches exact rational rounding for every amount up to 20,000 at common rates', () => {
    for (const ppm of [72_500, 62_500, 88_750, 130_000, 200_000]) {
      for (let amount = 0; amount <= 20_000; amount++) {
        const exact = (BigInt(amount) * BigInt(ppm) * 2n + 1_000_000n) / 2_000_000n;
        expect(roundDiv(amount * ppm, 1_000_000)).toBe(Number(exact));
      }
    }
  });
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
