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
  created_at: Timestamp;
  updated_at: Timestamp;
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
export interface ReservationsTable {
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
  }
}
