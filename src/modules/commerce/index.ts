import type { AppContext, PlatformModule } from '../../core/context.js';
import { AppError } from '../../core/errors.js';
import { assetResolver } from './assets.js';
import { BlendService } from './blend-service.js';
import { BlendStore } from './blend-store.js';
import { loadCatalog, seedCatalog } from './catalog-store.js';
import type { Blend, BlendUsage, Product, ProductVariant } from './domain.js';
import { commerceMigrations } from './migrations/index.js';
import { ProductService } from './product-service.js';
import { ProductStore } from './product-store.js';
import {
  type CustomerPreferences,
  preferenceProblems,
  type Recommendation,
  type RecommendationFilters,
} from './recommendations.js';
import { type CommerceRouteDeps, commerceRoutes } from './routes.js';

export type { Blend, BlendUsage, Product, ProductVariant } from './domain.js';
export type { CustomerPreferences, Recommendation, RecommendationFilters } from './recommendations.js';

/** What other modules (the cart and orders, profiles, the agents' tools) may use of the commerce module. */
export interface CommerceApi {
  getProduct(productId: string): Promise<Product | null>;
  /** A variant with its product; prices in minor units, stock as on_hand and reserved. */
  getVariant(variantId: string): Promise<{ product: Product; variant: ProductVariant } | null>;
  /** Several variants with their products, fetched together. */
  getVariants(
    variantIds: readonly string[],
  ): Promise<Map<string, { product: Product; variant: ProductVariant }>>;
  /** The owner's own blend or a public blend of the account; null otherwise. */
  getBlendForCustomer(
    accountId: string,
    ownerId: string,
    blendId: string,
  ): Promise<(Blend & { isOwner: boolean }) | null>;
  /**
   * Fills a blend's `usedIn` (shown to `usage.customerId` only) and `usageCount`; recording the
   * same order line twice is a no-op. Only a blend of `accountId` records the use.
   */
  recordBlendUsage(accountId: string, usage: BlendUsage): Promise<void>;
  /** The public URL of a catalogue image path. */
  assetUrl(path: string): string;
  /**
   * Blend recommendations for a customer, as `GET /api/custom-blends/recommendations` gives them:
   * from their blends and profile preferences; 400 for an unknown category or mood filter.
   */
  recommendationsFor(
    accountId: string,
    customerId: string,
    filters: RecommendationFilters,
  ): Promise<Recommendation[]>;
  /**
   * Throws 400 VALIDATION_ERROR naming each preference the catalog does not know (categories,
   * moods, disliked notes), fields under `preferences.`.
   */
  checkPreferences(preferences: Partial<CustomerPreferences>): void;
}

declare module '../../core/context.js' {
  interface ModuleApis {
    commerce: CommerceApi;
  }
}

const internals = new WeakMap<AppContext, CommerceRouteDeps>();

export const commerceModule: PlatformModule = {
  name: 'commerce',
  services: ['commerce'],
  migrations: commerceMigrations,

  async init(ctx) {
    await seedCatalog(ctx.db, ctx.clock.now().toISOString());
    const catalog = await loadCatalog(ctx.db);
    const asset = assetResolver(ctx.config);
    const productStore = new ProductStore(ctx.db);
    const blends = new BlendService({
      store: new BlendStore(ctx.db),
      products: productStore,
      catalog,
      clock: ctx.clock,
      asset,
      productCatalog: await productStore.all(),
      // Profiles come after commerce in module order: looked up when asked, not at boot.
      preferences: async (accountId, customerId) =>
        (await ctx.apis.profiles?.get(accountId, customerId))?.preferences ?? null,
    });
    const products = new ProductService(productStore, asset);
    internals.set(ctx, { blends, products, catalog, asset });
    ctx.apis.commerce = {
      getProduct: (id) => productStore.product(id),
      getVariant: (id) => productStore.variant(id),
      getVariants: (ids) => productStore.variantsByIds(ids),
      getBlendForCustomer: (accountId, owner, id) => blends.blendFor({ accountId, owner }, id),
      recordBlendUsage: (accountId, usage) => blends.recordUsage(accountId, usage),
      assetUrl: asset,
      recommendationsFor: (accountId, customerId, filters) =>
        blends.recommendations({ accountId, owner: customerId }, filters),
      checkPreferences(preferences) {
        const fields = preferenceProblems(catalog, preferences);
        if (fields.length > 0) {
          throw new AppError('VALIDATION_ERROR', 'Unknown preference values', {
            fields,
            allowed: { categories: catalog.categories.map((c) => c.id), moods: catalog.moods },
          });
        }
      },
    };
  },

  routes(app, ctx) {
    const deps = internals.get(ctx);
    if (!deps) throw new Error('commerce module not initialised');
    commerceRoutes(app, deps);
  },
};
