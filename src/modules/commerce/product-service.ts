import { runList } from '../../core/db/list.js';
import { notFound } from '../../core/errors.js';
import { type ListSpec, parseListQuery } from '../../core/http/list-query.js';
import { PRODUCT_TYPES } from './domain.js';
import { type ProductStore, toProduct } from './product-store.js';
import type { ProductViewT } from './schemas.js';
import { productView } from './views.js';

export const PRODUCT_LIST_SPEC: ListSpec = {
  columns: { createdAt: 'created_at' },
  sortable: ['id', 'name', 'type', 'createdAt'],
  filters: { type: PRODUCT_TYPES, name: 'string' },
  projectable: [
    'id',
    'name',
    'type',
    'description',
    'image',
    'currency',
    'properties',
    'variants',
    'createdAt',
  ],
  defaultSort: 'id',
  defaultOrder: 'asc',
  defaultLimit: 20,
  maxLimit: 100,
};

/** The products blends go into: list and detail, with available stock. */
export class ProductService {
  constructor(
    private readonly store: ProductStore,
    private readonly asset: (path: string) => string,
  ) {}

  async list(rawQuery: Record<string, unknown>) {
    const query = parseListQuery(rawQuery, PRODUCT_LIST_SPEC);
    // Variants are few per product; one query for all of them keeps the page at two queries.
    const variants = await this.store.variantsOf(
      (await this.store.productsQuery().select('id').execute()).map((r) => r.id),
    );
    return runList(this.store.productsQuery(), query, PRODUCT_LIST_SPEC, (row) =>
      productView(toProduct(row, variants.get(row.id) ?? []), this.asset),
    );
  }

  async get(id: string): Promise<ProductViewT> {
    const product = await this.store.product(id);
    if (!product) throw notFound('PRODUCT_NOT_FOUND', 'Product', id);
    return productView(product, this.asset);
  }
}
