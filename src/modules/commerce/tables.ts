import type { Bool, JsonText, Timestamp } from '../../core/db/types.js';

interface ScentCategoriesTable {
  id: string;
  name: string;
  description: string;
  /** Asset path, resolved against the asset base URL in responses. */
  image: string;
  color: string;
  mood: string;
  /** JSON array of note names. */
  popular_notes: JsonText;
  /** JSON array of category ids. */
  complementary_categories: JsonText;
  position: number;
}

interface ScentNotesTable {
  id: string;
  name: string;
  description: string;
  image: string;
  category_id: string;
  intensity: string;
  volatility: string;
  /** JSON array of mood words. */
  mood: JsonText;
  /** JSON array of note ids. */
  complementary_notes: JsonText;
}

export interface ProductsTable {
  id: string;
  name: string;
  type: string;
  description: string;
  image: string;
  currency: string;
  /** JSON object: ideal pyramid and the simulation properties (wax type, fragrance load, …). */
  properties: JsonText;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ProductVariantsTable {
  id: string;
  product_id: string;
  name: string;
  sku: string;
  /** Minor units. */
  price: number;
  on_hand: number;
  reserved: number;
  /** JSON object: per-variant simulation properties (wax weight, volume). */
  properties: JsonText;
  position: number;
}

export interface BlendsTable {
  id: string;
  account_id: string;
  /** The customer id of a customer token, or the account id for the key's own account. */
  owner: string;
  name: string;
  name_key: string;
  description: string;
  is_public: Bool;
  /** JSON array of {id, ratio} with ratios as fractions. */
  notes: JsonText;
  base_intensity: string;
  /** JSON array of strings. */
  occasions: JsonText;
  created_at: Timestamp;
  updated_at: Timestamp;
}

interface BlendUsageTable {
  id: string;
  blend_id: string;
  product_id: string;
  product_name: string;
  order_id: string;
  order_date: Timestamp;
  /** The ordering customer (a cart's customer, else the order's `customer.id`); null if unknown. */
  customer_id: string | null;
}

declare module '../../core/db/types.js' {
  interface Database {
    scent_categories: ScentCategoriesTable;
    scent_notes: ScentNotesTable;
    products: ProductsTable;
    product_variants: ProductVariantsTable;
    blends: BlendsTable;
    blend_usage: BlendUsageTable;
  }
}
