/** Cart arithmetic in integer minor units; one rounding rule: half away from zero, per line. */

interface PricedLine {
  /** Unit price in minor units. */
  unitPrice: number;
  quantity: number;
  /** Gift-wrapping fee per unit, minor units (0 when not wrapped). */
  wrapFee: number;
}

interface Totals {
  itemCount: number;
  subtotal: number;
  discountTotal: number;
  estimatedTax: number;
  estimatedTotal: number;
  /** Each line's amount (price × quantity + wrapping), in line order. */
  lineAmounts: number[];
  /** Each line's tax, in line order; their sum is estimatedTax. */
  lineTaxes: number[];
}

/** `n / d` rounded half away from zero, in exact integer arithmetic (n, d integers, d > 0). */
export function roundDiv(n: number, d: number): number {
  const q = Math.floor((2 * Math.abs(n) + d) / (2 * d));
  return n < 0 ? -q : q;
}

/** A rate as whole parts per million, so tax is computed without binary fractions (7.25 % → 72,500). */
const PPM = 1_000_000;
const toPpm = (rate: number): number => Math.round(rate * PPM);

/**
 * Tax is computed per line on the line's amount and summed, so totals equal the sum of their lines.
 * `discountTotal` is allocated across lines in proportion to their amounts (largest remainder), and
 * never above the subtotal.
 */
export function computeTotals(lines: PricedLine[], discount: number, taxRate: number): Totals {
  const lineAmounts = lines.map((l) => l.unitPrice * l.quantity + l.wrapFee * l.quantity);
  const subtotal = lineAmounts.reduce((a, b) => a + b, 0);
  const discountTotal = Math.max(0, Math.min(discount, subtotal));
  const shares = allocate(discountTotal, lineAmounts);
  const ppm = toPpm(taxRate);
  const lineTaxes = lineAmounts.map((amount, i) => roundDiv((amount - (shares[i] ?? 0)) * ppm, PPM));
  const estimatedTax = lineTaxes.reduce((a, b) => a + b, 0);
  return {
    itemCount: lines.reduce((a, l) => a + l.quantity, 0),
    subtotal,
    discountTotal,
    estimatedTax,
    estimatedTotal: subtotal - discountTotal + estimatedTax,
    lineAmounts,
    lineTaxes,
  };
}

/** Splits `total` over `weights` in proportion, in whole units, summing exactly to `total`. */
export function allocate(total: number, weights: number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum === 0 || total === 0) return weights.map(() => 0);
  const exact = weights.map((w) => (total * w) / sum);
  const floors = exact.map(Math.floor);
  let left = total - floors.reduce((a, b) => a + b, 0);
  const order = exact
    .map((e, i) => [e - Math.floor(e), i] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [, i] of order) {
    if (left <= 0) break;
    floors[i] = (floors[i] ?? 0) + 1;
    left--;
  }
  return floors;
}
