/** The domain vocabulary of custom blends: closed lists and the shapes the parts share. */

export const INTENSITIES = ['light', 'medium', 'strong'] as const;
export type Intensity = (typeof INTENSITIES)[number];

export const VOLATILITIES = ['top', 'middle', 'base'] as const;
export type Volatility = (typeof VOLATILITIES)[number];

/** Where a test-product simulation places the product, with the room size it assumes (m²). */
export const ENVIRONMENTS = {
  bathroom: 6,
  bedroom: 14,
  office: 16,
  kitchen: 15,
  'living-room': 25,
  'open-plan': 45,
  outdoor: 120,
} as const;
export type Environment = keyof typeof ENVIRONMENTS;
export const ENVIRONMENT_NAMES = Object.keys(ENVIRONMENTS) as Environment[];

export const PRODUCT_TYPES = ['candle', 'diffuser', 'room_spray', 'perfume'] as const;
export type ProductType = (typeof PRODUCT_TYPES)[number];

export interface Category {
  id: string;
  name: string;
  description: string;
  image: string;
  color: string;
  mood: string;
  popularNotes: string[];
  complementaryCategories: string[];
}

export interface Note {
  id: string;
  name: string;
  description: string;
  image: string;
  categoryId: string;
  intensity: Intensity;
  volatility: Volatility;
  mood: string[];
  complementaryNotes: string[];
}

/** Shares of the fragrance pyramid; they sum to 1. */
export interface Pyramid {
  top: number;
  heart: number;
  base: number;
}

export interface ProductVariant {
  id: string;
  productId: string;
  name: string;
  sku: string;
  /** Minor units. */
  price: number;
  onHand: number;
  reserved: number;
  properties: Record<string, unknown>;
}

export interface Product {
  id: string;
  name: string;
  type: ProductType;
  description: string;
  image: string;
  currency: string;
  /** The pyramid this product type renders best. */
  ideal: Pyramid;
  properties: Record<string, unknown>;
  variants: ProductVariant[];
  createdAt: string;
}

/** A note of a composition, as stored: ratio is a fraction of the blend. */
export interface NoteRatio {
  id: string;
  ratio: number;
}

/** A composition note joined with its catalog entry. */
export interface ResolvedNote extends NoteRatio {
  note: Note;
}

export interface Blend {
  id: string;
  accountId: string;
  owner: string;
  name: string;
  description: string;
  isPublic: boolean;
  notes: NoteRatio[];
  baseIntensity: Intensity;
  occasions: string[];
  createdAt: string;
  updatedAt: string;
}

export interface BlendUsage {
  blendId: string;
  productId: string;
  productName: string;
  orderId: string;
  orderDate: string;
  /** The customer whose order it was, when known: only they see the order in `usedIn`. */
  customerId: string | null;
}
