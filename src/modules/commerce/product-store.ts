import type { Selectable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { Product, ProductType, ProductVariant, Pyramid } from './domain.js';
import type { ProductsTable, ProductVariantsTable } from './tables.js';
import './tables.js';

type ProductRow = Selectable<ProductsTable>;
type VariantRow = Selectable<ProductVariantsTable>;

function toVariant(row: VariantRow): ProductVariant {
  return {
    id: row.id,
    productId: row.product_id,
    name: row.name,
    sku: row.sku,
    price: row.price,
    onHand: row.on_hand,
    reserved: row.reserved,
    properties: JSON.parse(row.properties) as Record<string, unknown>,
  };
}

export function toProduct(row: ProductRow, variants: ProductVariant[]): Product {
  const { ideal, ...properties } = JSON.parse(row.properties) as { ideal: Pyramid } & Record<string, unknown>;
  return {
    id: row.id,
    name: row.name,
    type: row.type as ProductType,
    description: row.description,
    image: row.image,
    currency: row.currency,
    ideal,
    properties,
    variants,
    createdAt: row.created_at,
  };
}

/** Queries on products and their variants (stock lives in the variants). */
export class ProductStore {
  constructor(private readonly db: Db) {}

  productsQuery() {
    return this.db.selectFrom('products').selectAll();
  }

  async variantsOf(productIds: readonly string[]): Promise<Map<string, ProductVariant[]>> {
    const out = new Map<string, ProductVariant[]>();
    if (productIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('product_variants')
      .selectAll()
      .where('product_id', 'in', productIds)
      .orderBy('product_id')
      .orderBy('position')
      .execute();
    for (const row of rows) {
      const list = out.get(row.product_id) ?? [];
      list.push(toVariant(row));
      out.set(row.product_id, list);
    }
    return out;
  }

  async product(id: string): Promise<Product | null> {
    const row = await this.db.selectFrom('products').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return null;
    const variants = await this.variantsOf([id]);
    return toProduct(row, variants.get(id) ?? []);
  }

  async all(): Promise<Product[]> {
    const rows = await this.db.selectFrom('products').selectAll().orderBy('id').execute();
    const variants = await this.variantsOf(rows.map((r) => r.id));
    return rows.map((r) => toProduct(r, variants.get(r.id) ?? []));
  }

  /** Several variants with their products, in two queries. */
  async variantsByIds(
    ids: readonly string[],
  ): Promise<Map<string, { product: Product; variant: ProductVariant }>> {
    const out = new Map<string, { product: Product; variant: ProductVariant }>();
    if (ids.length === 0) return out;
    const rows = await this.db
      .selectFrom('product_variants')
      .select('product_id')
      .where('id', 'in', ids)
      .execute();
    const productIds = [...new Set(rows.map((r) => r.product_id))];
    if (productIds.length === 0) return out;
    const products = await this.db.selectFrom('products').selectAll().where('id', 'in', productIds).execute();
    const variants = await this.variantsOf(productIds);
    for (const row of products) {
      const product = toProduct(row, variants.get(row.id) ?? []);
      for (const variant of product.variants)
        if (ids.includes(variant.id)) out.set(variant.id, { product, variant });
    }
    return out;
  }

  async variant(id: string): Promise<{ product: Product; variant: ProductVariant } | null> {
    const row = await this.db
      .selectFrom('product_variants')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) return null;
    const product = await this.product(row.product_id);
    const variant = product?.variants.find((v) => v.id === id);
    return product && variant ? { product, variant } : null;
  }
}
