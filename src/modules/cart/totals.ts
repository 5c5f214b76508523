/** Cart arithmetic in integer minor units; one rounding rule: half away from zero, per line. */

export interface PricedLine {
  /** Unit price in minor units. */
  unitPrice: number;
  quantity: number;
  /** Gift-wrapping fee per unit, minor units (0 when not wrapped). */
  wrapFee: number;
}

export interface Totals {
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

export function roundHalfAwayFromZero(value: number): number {
  return Math.sign(value) * Math.round(Math.abs(value));
}

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
  const lineTaxes = lineAmounts.map((amount, i) =>
    roundHalfAwayFromZero((amount - (shares[i] ?? 0)) * taxRate),
  );
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
