import type { Db } from '../../core/db/database.js';
import { Catalog } from './catalog.js';
import catalogData from './data/catalog.json' with { type: 'json' };
import productData from './data/products.json' with { type: 'json' };
import type { Category, Intensity, Note, Volatility } from './domain.js';
import './tables.js';

const parse = <T>(text: string): T => JSON.parse(text) as T;

/** Inserts what is missing of the catalog and products data files; safe to run on every start. */
export async function seedCatalog(db: Db, now: string): Promise<void> {
  await db
    .insertInto('scent_categories')
    .values(
      catalogData.categories.map((c, position) => ({
        id: c.id,
        name: c.name,
        description: c.description,
        image: c.image,
        color: c.color,
        mood: c.mood,
        popular_notes: JSON.stringify(c.popularNotes),
        complementary_categories: JSON.stringify(c.complementaryCategories),
        position,
      })),
    )
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  await db
    .insertInto('scent_notes')
    .values(
      catalogData.notes.map((n) => ({
        id: n.id,
        name: n.name,
        description: n.description,
        image: n.image,
        category_id: n.categoryId,
        intensity: n.intensity,
        volatility: n.volatility,
        mood: JSON.stringify(n.mood),
        complementary_notes: JSON.stringify(n.complementaryNotes),
      })),
    )
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  await db
    .insertInto('products')
    .values(
      productData.products.map((p) => ({
        id: p.id,
        name: p.name,
        type: p.type,
        description: p.description,
        image: p.image,
        currency: productData.currency,
        properties: JSON.stringify({ ideal: p.ideal, ...p.properties }),
        created_at: now,
        updated_at: now,
      })),
    )
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  await db
    .insertInto('product_variants')
    .values(
      productData.products.flatMap((p) =>
        p.variants.map((v, position) => ({
          id: v.id,
          product_id: p.id,
          name: v.name,
          sku: v.sku,
          price: v.price,
          on_hand: v.stock,
          reserved: 0,
          properties: JSON.stringify(v.properties),
          position,
        })),
      ),
    )
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/** Reads the scent catalog from its tables. */
export async function loadCatalog(db: Db): Promise<Catalog> {
  const [categoryRows, noteRows] = await Promise.all([
    db.selectFrom('scent_categories').selectAll().orderBy('position').execute(),
    db.selectFrom('scent_notes').selectAll().orderBy('category_id').orderBy('name').execute(),
  ]);
  const position = new Map(categoryRows.map((c) => [c.id, c.position]));
  const categories: Category[] = categoryRows.map((c) => ({
    id: c.id,
    name: c.name,
    description: c.description,
    image: c.image,
    color: c.color,
    mood: c.mood,
    popularNotes: parse<string[]>(c.popular_notes),
    complementaryCategories: parse<string[]>(c.complementary_categories),
  }));
  const notes: Note[] = noteRows
    .map((n) => ({
      id: n.id,
      name: n.name,
      description: n.description,
      image: n.image,
      categoryId: n.category_id,
      intensity: n.intensity as Intensity,
      volatility: n.volatility as Volatility,
      mood: parse<string[]>(n.mood),
      complementaryNotes: parse<string[]>(n.complementary_notes),
    }))
    .sort(
      (a, b) =>
        (position.get(a.categoryId) ?? 0) - (position.get(b.categoryId) ?? 0) || a.name.localeCompare(b.name),
    );
  return new Catalog(categories, notes);
}

/** The catalog straight from the data file (unit tests, tools); the server reads its tables. */
export function catalogFromData(): Catalog {
  return new Catalog(
    catalogData.categories.map(({ color, ...c }) => ({ ...c, color })),
    catalogData.notes.map((n) => ({
      ...n,
      intensity: n.intensity as Intensity,
      volatility: n.volatility as Volatility,
    })),
  );
}
