import type { DiscountCodesTable } from './tables.js';
import { roundDiv } from './totals.js';

export type DiscountRow = DiscountCodesTable;

type NotApplicable = 'not_started' | 'expired' | 'exhausted' | 'minimum_not_met';

/** Why a code cannot apply now to a cart of this subtotal (minor units), or null when it can. */
export function whyNot(d: DiscountRow, now: string, subtotal: number): NotApplicable | null {
  if (d.starts_at && now < d.starts_at) return 'not_started';
  if (d.ends_at && now >= d.ends_at) return 'expired';
  if (d.usage_limit !== null && d.used_count >= d.usage_limit) return 'exhausted';
  if (subtotal < d.min_subtotal) return 'minimum_not_met';
  return null;
}

/** The amount a code takes off a subtotal, in minor units (free shipping takes nothing off the goods). */
export function amountOf(d: DiscountRow, subtotal: number): number {
  switch (d.type) {
    case 'percentage':
      return roundDiv(subtotal * d.value, 100);
    case 'fixed_amount':
      return Math.min(d.value, subtotal);
    default:
      return 0;
  }
}

/** The stacking rule: a non-stackable code stands alone; stackable codes combine with each other. */
export function stacks(existing: DiscountRow[], added: DiscountRow): boolean {
  if (existing.length === 0) return true;
  return added.stackable === 1 && existing.every((e) => e.stackable === 1);
}

export const REASONS: Record<NotApplicable | 'unknown' | 'not_combinable', string> = {
  unknown: 'no such code',
  not_started: 'the code is not valid yet',
  expired: 'the code has expired',
  exhausted: 'the code has been used up',
  minimum_not_met: 'the cart is below the minimum subtotal of the code',
  not_combinable: 'the code cannot be combined with the codes already on the cart',
};
