import type { AppContext, PlatformModule } from '../../core/context.js';
import { requireApi } from '../../core/context.js';
import { toMinor } from '../../core/money.js';
import { CartService } from './cart-service.js';
import { CartStore } from './cart-store.js';
import { DiscountService } from './discount-service.js';
import { DiscountStore } from './discount-store.js';
import { InventoryStore } from './inventory-store.js';
import { OrderService } from './order-service.js';
import { type CartRouteDeps, cartRoutes } from './routes.js';
import './tables.js';
import { cartMigrations } from './migrations/index.js';

/** What operations and other modules may use of the cart module. */
interface CartApi {
  /** Releases every checkout reservation past its time (the periodic sweep); returns their checkout ids. */
  releaseExpiredReservations(): Promise<string[]>;
  /**
   * Makes sure the customer has a cart (an empty one for a new customer; an existing cart is left
   * as it is, two calls at once still make one); returns its id.
   */
  ensureCart(accountId: string, customerId: string): Promise<string>;
}

declare module '../../core/context.js' {
  interface ModuleApis {
    cart: CartApi;
  }
}

const internals = new WeakMap<AppContext, CartRouteDeps>();
/** How often expired checkout reservations are released (they are also released on read). */
const SWEEP_MS = 30_000;

/** The cart, checkout with inventory reservation, and the storefront's order intake (service `commerce`). */
export const cartModule: PlatformModule = {
  name: 'cart',
  services: ['commerce'],
  migrations: cartMigrations,

  init(ctx) {
    const commerce = requireApi(ctx, 'commerce');
    const inventory = new InventoryStore(ctx.db);
    const discountStore = new DiscountStore(ctx.db);
    const carts = new CartService({
      carts: new CartStore(ctx.db),
      discounts: discountStore,
      inventory,
      commerce,
      clock: ctx.clock,
      settings: {
        currency: ctx.config.CURRENCY,
        giftWrapFee: toMinor(ctx.config.GIFT_WRAP_FEE),
        taxRate: ctx.config.TAX_DEFAULT_RATE,
        checkoutTtlSeconds: ctx.config.CHECKOUT_TTL_SECONDS,
        maxPerVariant: ctx.config.CART_MAX_RESERVED_PER_VARIANT,
        maxRenewals: ctx.config.CHECKOUT_MAX_RENEWALS,
      },
    });
    const orders = new OrderService({
      db: ctx.db,
      inventory,
      discounts: discountStore,
      commerce,
      clock: ctx.clock,
      currency: ctx.config.CURRENCY,
    });
    const discounts = new DiscountService(discountStore, ctx.clock);
    internals.set(ctx, { carts, orders, inventory, discounts });
    const releaseExpiredReservations = () => inventory.releaseExpired(ctx.clock.now().toISOString());
    ctx.apis.cart = {
      releaseExpiredReservations,
      ensureCart: (accountId, customerId) => carts.ensure({ accountId, customerId }),
    };
    if (ctx.services.has('commerce')) {
      const sweep = setInterval(() => {
        releaseExpiredReservations().catch((err: unknown) =>
          ctx.log.error({ err }, 'releasing expired reservations failed'),
        );
      }, SWEEP_MS);
      sweep.unref();
      ctx.onClose(() => clearInterval(sweep));
    }
  },

  routes(app, ctx) {
    const deps = internals.get(ctx);
    if (!deps) throw new Error('cart module not initialised');
    cartRoutes(app, deps);
  },
};
