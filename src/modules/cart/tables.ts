import type { JsonText, Timestamp } from '../../core/db/types.js';

export interface CartsTable {
  id: string;
  account_id: string;
  /** The customer of a customer token, or the account id when a key acts for its account. */
  customer_id: string;
  notes: string;
  /** The prepared checkout holding a reservation, if any. */
  checkout_id: string | null;
  checkout_expires: Timestamp | null;
  /** The last shipping estimate's address: it sets the tax rate. */
  ship_country: string | null;
  ship_state: string | null;
  ship_postal: string | null;
  /** Reservations made back to back in the current run (the first one included). */
  hold_count: number;
  /** Until when a new reservation continues the run: the last one's expiry plus one TTL. */
  hold_run_until: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type DiscountType = 'percentage' | 'fixed_amount' | 'free_shipping';

export interface DiscountCodesTable {
  id: string;
  account_id: string;
  code: string;
  /** Upper-cased code: codes match ignoring case. */
  code_key: string;
  description: string;
  type: DiscountType;
  /** Percentage points (1–100) or minor units (fixed amount); 0 for free shipping. */
  value: number;
  /** Minor units. */
  min_subtotal: number;
  starts_at: Timestamp | null;
  ends_at: Timestamp | null;
  usage_limit: number | null;
  used_count: number;
  /** 1: combines with other stackable codes; 0: only code on the cart. */
  stackable: 0 | 1;
  created_at: Timestamp;
}

interface CartDiscountsTable {
  cart_id: string;
  discount_id: string;
  applied_at: Timestamp;
}

export interface CartItemsTable {
  id: string;
  cart_id: string;
  product_id: string;
  variant_id: string;
  quantity: number;
  /** JSON object {fragrance?, fragranceId?, fragranceName?, giftWrapped, giftMessage?}. */
  customizations: JsonText;
  /** Canonical customizations: same variant and same key merge into one line. */
  merge_key: string;
  created_at: Timestamp;
}

/** Units held for a prepared checkout until it expires, is renewed or is turned into an order. */
interface ReservationsTable {
  checkout_id: string;
  variant_id: string;
  quantity: number;
  expires_at: Timestamp;
}

export interface OrdersTable {
  id: string;
  account_id: string;
  /** The storefront's own order id: the intake is idempotent on it. */
  storefront_id: string;
  customer: JsonText;
  line_items: JsonText;
  /** Minor units. */
  total: number;
  currency: string;
  checkout_id: string | null;
  created_at: Timestamp;
}

declare module '../../core/db/types.js' {
  interface Database {
    carts: CartsTable;
    cart_items: CartItemsTable;
    reservations: ReservationsTable;
    orders: OrdersTable;
    discount_codes: DiscountCodesTable;
    cart_discounts: CartDiscountsTable;
  }
}
