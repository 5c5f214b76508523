import { fromMinor } from '../../core/money.js';
import type { Catalog } from './catalog.js';
import type { Category, Note, Product } from './domain.js';
import type { ProductViewT } from './schemas.js';

type Asset = (path: string) => string;

export const categoryView = (c: Category, asset: Asset) => ({
  id: c.id,
  name: c.name,
  description: c.description,
  image: asset(c.image),
  mood: c.mood,
  popularNotes: c.popularNotes,
  complementaryCategories: c.complementaryCategories,
});

export const noteView = (n: Note, catalog: Catalog, asset: Asset) => ({
  id: n.id,
  name: n.name,
  description: n.description,
  image: asset(n.image),
  category: catalog.categoryName(n.categoryId),
  categoryId: n.categoryId,
  intensity: n.intensity,
  volatility: n.volatility,
  mood: n.mood,
  complementaryNotes: n.complementaryNotes,
});

export const productView = (p: Product, asset: Asset): ProductViewT => ({
  id: p.id,
  name: p.name,
  type: p.type,
  description: p.description,
  image: asset(p.image),
  currency: p.currency,
  properties: { ...p.properties, idealPyramid: p.ideal },
  variants: p.variants.map((v) => ({
    id: v.id,
    name: v.name,
    sku: v.sku,
    price: fromMinor(v.price),
    stock: Math.max(0, v.onHand - v.reserved),
    properties: v.properties,
  })),
  createdAt: p.createdAt,
});
