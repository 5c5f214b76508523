import { type Clock, isoNow } from '../../core/clock.js';
import { AppError, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { fromMinor } from '../../core/money.js';
import type { CommerceApi, Product, ProductVariant } from '../commerce/index.js';
import type { Address } from './address.js';
import { checkAddress } from './address.js';
import type { CartRow, CartStore } from './cart-store.js';
import type { DiscountStore } from './discount-store.js';
import { amountOf, type DiscountRow, REASONS, whyNot } from './discounts.js';
import type { InventoryStore, Shortage } from './inventory-store.js';
import { estimatesFor, FREE_SHIPPING_THRESHOLD, taxRateFor } from './shipping.js';
import { computeTotals } from './totals.js';

export interface Actor {
  accountId: string;
  /** The customer token's `sub`, or the account id for a key acting for its account. */
  customerId: string;
}

interface Customizations {
  fragrance?: string;
  fragranceId?: string;
  giftWrapped?: boolean;
  giftMessage?: string;
}

interface StoredCustomizations extends Customizations {
  fragranceName?: string;
  giftWrapped: boolean;
}

interface CartSettings {
  currency: string;
  /** Minor units per wrapped unit. */
  giftWrapFee: number;
  taxRate: number;
  checkoutTtlSeconds: number;
  /** At most this many units of one variant in a cart, so in one customer's reservation. */
  maxPerVariant: number;
  /** Back-to-back renewals of a reservation before it must lapse for one TTL. */
  maxRenewals: number;
}

interface CartServiceDeps {
  carts: CartStore;
  discounts: DiscountStore;
  inventory: InventoryStore;
  commerce: CommerceApi;
  clock: Clock;
  settings: CartSettings;
}

const money = (minor: number) => fromMinor(minor);

/** One active cart per customer; totals recomputed on every answer. */
export class CartService {
  constructor(private readonly deps: CartServiceDeps) {}

  async get(actor: Actor) {
    return this.view(await this.cart(actor));
  }

  /** The customer's cart, made empty if they have none (a new user's); an existing one is left as is. */
  async ensure(actor: Actor): Promise<string> {
    return (await this.cart(actor)).id;
  }

  async addItem(
    actor: Actor,
    input: { productId: string; variantId: string; quantity: number; customizations?: Customizations },
  ) {
    const cart = await this.cart(actor);
    const { product, variant } = await this.variantOf(input.productId, input.variantId);
    const customizations = await this.customizations(actor, input.customizations ?? {});
    const mergeKey = keyOf(customizations);
    const inCartOf = (items: readonly { variant_id: string; quantity: number }[]) =>
      items.filter((i) => i.variant_id === variant.id).reduce((a, i) => a + i.quantity, 0);
    // Stock is read before the cart is locked (on a connection of its own: waiters holding the pool
    // would starve a read made under the lock); checkout reserves under the lock, so it decides.
    await this.checkStock(variant.id, inCartOf(await this.deps.carts.items(cart.id)) + input.quantity, cart);
    const at = isoNow(this.deps.clock);
    // The line and the caps are read and written on the locked cart: of adds racing, each sees the
    // last (no lost units, no duplicate line, the per-variant cap held).
    await this.deps.carts.withLockedCart(cart.id, async (trx) => {
      const items = await this.deps.carts.items(cart.id, trx);
      const same = items.find((i) => i.variant_id === variant.id && i.merge_key === mergeKey);
      const lineQuantity = (same?.quantity ?? 0) + input.quantity;
      if (lineQuantity > 99) {
        throw new AppError('VALIDATION_ERROR', 'A line holds at most 99 units', {
          fields: [{ field: 'quantity', message: `the line would hold ${lineQuantity}; at most 99` }],
        });
      }
      this.checkCap(variant.id, inCartOf(items) + input.quantity);
      if (same) {
        await this.deps.carts.updateItem(same.id, { quantity: lineQuantity }, trx);
      } else {
        await this.deps.carts.insertItem(
          {
            id: newId('item'),
            cart_id: cart.id,
            product_id: product.id,
            variant_id: variant.id,
            quantity: input.quantity,
            customizations: JSON.stringify(customizations),
            merge_key: mergeKey,
            created_at: at,
          },
          trx,
        );
      }
    });
    return this.view(await this.changed(cart, at));
  }

  async updateItem(
    actor: Actor,
    itemId: string,
    input: { quantity?: number; customizations?: Customizations },
  ) {
    const cart = await this.cart(actor);
    const item = await this.deps.carts.item(cart.id, itemId);
    if (!item) throw notFound('ITEM_NOT_FOUND', 'Cart item', itemId);
    const quantity = input.quantity ?? item.quantity;
    const customizations = input.customizations
      ? await this.customizations(actor, input.customizations)
      : (JSON.parse(item.customizations) as StoredCustomizations);
    const mergeKey = keyOf(customizations);
    const items = await this.deps.carts.items(cart.id);
    const others = items.filter((i) => i.variant_id === item.variant_id && i.id !== item.id);
    const wanted = others.reduce((a, i) => a + i.quantity, 0) + quantity;
    this.checkCap(item.variant_id, wanted);
    await this.checkStock(item.variant_id, wanted, cart);
    const twin = others.find((i) => i.merge_key === mergeKey);
    if (twin) {
      // Now equal to another line: they become one.
      if (twin.quantity + quantity > 99) {
        throw new AppError('VALIDATION_ERROR', 'A line holds at most 99 units', {
          fields: [{ field: 'quantity', message: 'merging with an equal line would exceed 99' }],
        });
      }
      await this.deps.carts.updateItem(twin.id, { quantity: twin.quantity + quantity });
      await this.deps.carts.deleteItem(item.id);
    } else {
      await this.deps.carts.updateItem(item.id, {
        quantity,
        customizations: JSON.stringify(customizations),
        merge_key: mergeKey,
      });
    }
    return this.view(await this.changed(cart, isoNow(this.deps.clock)));
  }

  async deleteItem(actor: Actor, itemId: string) {
    const cart = await this.cart(actor);
    const item = await this.deps.carts.item(cart.id, itemId);
    if (!item) throw notFound('ITEM_NOT_FOUND', 'Cart item', itemId);
    await this.deps.carts.deleteItem(item.id);
    return this.view(await this.changed(cart, isoNow(this.deps.clock)));
  }

  async setNote(actor: Actor, note: string) {
    const cart = await this.cart(actor);
    const at = isoNow(this.deps.clock);
    await this.deps.carts.touch(cart.id, { notes: note, updated_at: at });
    return this.view({ ...cart, notes: note, updated_at: at });
  }

  /** Applies a code (matched ignoring case); 422 INVALID_DISCOUNT_CODE with the reason otherwise. */
  async applyDiscount(actor: Actor, code: string) {
    const cart = await this.cart(actor);
    const found = await this.deps.discounts.byCode(actor.accountId, code);
    const refuse = (reason: keyof typeof REASONS) => {
      throw new AppError(
        'INVALID_DISCOUNT_CODE',
        `Discount code '${code}' cannot be used: ${REASONS[reason]}`,
        {
          code,
          reason,
        },
      );
    };
    if (!found) return refuse('unknown');
    const applied = await this.deps.discounts.forCart(cart.id);
    if (applied.some((d) => d.id === found.id)) return this.view(cart);
    const { subtotal } = await this.priced(cart);
    const why = whyNot(found, isoNow(this.deps.clock), subtotal);
    if (why) return refuse(why);
    const at = isoNow(this.deps.clock);
    // The stacking check and the insert run on the locked cart: of two codes applied at once, the
    // second sees the first.
    const outcome = await this.deps.carts.withLockedCart(cart.id, async (trx) => {
      const result = await this.deps.discounts.attachIfStacks(trx, cart.id, found, at);
      if (result === 'attached') await this.deps.carts.touch(cart.id, { updated_at: at }, trx);
      return result;
    });
    if (outcome === 'not_combinable') return refuse('not_combinable');
    return this.get(actor);
  }

  async removeDiscount(actor: Actor, code: string) {
    const cart = await this.cart(actor);
    const applied = await this.deps.discounts.forCart(cart.id);
    const found = applied.find((d) => d.code_key === code.toUpperCase());
    if (!found)
      throw new AppError('DISCOUNT_NOT_FOUND', `Discount code '${code}' is not on the cart`, { code });
    const at = isoNow(this.deps.clock);
    await this.deps.discounts.detach(cart.id, found.id);
    await this.deps.carts.touch(cart.id, { updated_at: at });
    return this.view({ ...cart, updated_at: at });
  }

  /** Rates and business-day dates for an address, which is remembered for the tax estimate. */
  async shippingEstimates(actor: Actor, address: Address) {
    const problems = checkAddress(address);
    if (problems.length > 0) throw new AppError('VALIDATION_ERROR', 'Invalid address', { fields: problems });
    const cart = await this.cart(actor);
    const country = address.country.toUpperCase();
    const state = address.state ? address.state.toUpperCase() : null;
    await this.deps.carts.touch(cart.id, {
      ship_country: country,
      ship_state: state,
      ship_postal: address.postalCode.trim(),
      updated_at: cart.updated_at,
    });
    const { subtotal, discounts } = await this.priced(cart);
    const net = subtotal - discounts.reduce((a, d) => a + d.amount, 0);
    const threshold = Math.round(FREE_SHIPPING_THRESHOLD * 100);
    const freeByCode = discounts.some((d) => d.row.type === 'free_shipping' && d.applies);
    const eligible = freeByCode || net >= threshold;
    const normalized: Address = { postalCode: address.postalCode, country, ...(state ? { state } : {}) };
    return {
      estimates: estimatesFor(normalized, this.deps.clock.now(), eligible).map((e) => ({
        ...e,
        cost: money(e.cost),
      })),
      freeShippingEligible: eligible,
      freeShippingThreshold: money(threshold),
      amountToFreeShipping: money(eligible ? 0 : Math.max(0, threshold - net)),
    };
  }

  /**
   * Reserves every line's stock (quantities of one variant summed across lines) for
   * CHECKOUT_TTL_SECONDS; all or nothing. Calling it again renews the reservation, at most
   * CHECKOUT_MAX_RENEWALS times back to back. The cart is locked meanwhile: two checkouts of one
   * cart at once cannot leave two reservations.
   */
  async checkout(actor: Actor) {
    const cart = await this.cart(actor);
    const items = await this.deps.carts.items(cart.id);
    if (items.length === 0) throw new AppError('UNPROCESSABLE', 'The cart is empty', { cartId: cart.id });
    const lines = new Map<string, number>();
    for (const i of items) lines.set(i.variant_id, (lines.get(i.variant_id) ?? 0) + i.quantity);
    // The cap may have been lowered since the lines were added.
    for (const [variantId, quantity] of lines) this.checkCap(variantId, quantity);
    await this.checkCodesLeft(cart);
    const now = this.deps.clock.now();
    const at = now.toISOString();
    const ttlMs = this.deps.settings.checkoutTtlSeconds * 1000;
    const checkoutId = newId('chk');
    const expires = new Date(now.getTime() + ttlMs).toISOString();
    let short: Shortfall;
    try {
      const held = await this.deps.carts.withLockedCart(cart.id, async (trx, locked) => {
        const holds = this.holdsAfter(locked, at);
        const shortages = await this.deps.inventory.reserve(
          trx,
          checkoutId,
          locked.checkout_id,
          lines,
          expires,
        );
        if (shortages.length > 0) throw new Shortfall(locked.checkout_id, shortages);
        const changes = {
          checkout_id: checkoutId,
          checkout_expires: expires,
          hold_count: holds,
          hold_run_until: new Date(now.getTime() + 2 * ttlMs).toISOString(),
          updated_at: at,
        };
        await this.deps.carts.touch(cart.id, changes, trx);
        return { ...locked, ...changes };
      });
      return this.view(held);
    } catch (error) {
      if (!(error instanceof Shortfall)) throw error;
      short = error;
    }
    // Nothing was reserved: the previous reservation no longer matches what the customer asked.
    if (short.previous) await this.deps.inventory.release(short.previous);
    await this.deps.carts.touch(cart.id, { checkout_id: null, checkout_expires: null, updated_at: at });
    throw new AppError('OUT_OF_STOCK', 'Not enough stock for some lines; nothing was reserved', {
      lines: short.lines.map((s) => ({
        ...s,
        itemIds: items.filter((i) => i.variant_id === s.variantId).map((i) => i.id),
      })),
    });
  }

  /**
   * How many back-to-back reservations the cart holds with one more: a new one within one TTL of
   * the last one's expiry continues the run. Past 1 + CHECKOUT_MAX_RENEWALS the stock must go
   * back on sale for a while: 409 until the run ends.
   */
  private holdsAfter(cart: CartRow, at: string): number {
    const continues = cart.hold_run_until !== null && at < cart.hold_run_until;
    const holds = continues ? cart.hold_count + 1 : 1;
    const { maxRenewals } = this.deps.settings;
    if (holds > 1 + maxRenewals) {
      throw new AppError(
        'CONFLICT',
        `The reservation was renewed ${maxRenewals} times in a row; the cart can be reserved again from ${cart.hold_run_until}`,
        { maxRenewals, retryAt: cart.hold_run_until },
      );
    }
    return holds;
  }

  /** A limited code used up by other orders since it was applied: 422 before the customer pays. */
  private async checkCodesLeft(cart: CartRow): Promise<void> {
    const codes = await this.deps.discounts.forCart(cart.id);
    const gone = codes.find((c) => c.usage_limit !== null && c.used_count >= c.usage_limit);
    if (gone) {
      throw new AppError(
        'INVALID_DISCOUNT_CODE',
        `Discount code '${gone.code}' cannot be used: ${REASONS.exhausted}; remove it to check out`,
        { code: gone.code, reason: 'exhausted' },
      );
    }
  }

  /** One customer may hold at most CART_MAX_RESERVED_PER_VARIANT units of a variant. */
  private checkCap(variantId: string, wanted: number): void {
    const limit = this.deps.settings.maxPerVariant;
    if (wanted > limit) {
      throw new AppError('UNPROCESSABLE', `A cart holds at most ${limit} units of one variant`, {
        variantId,
        requested: wanted,
        limit,
      });
    }
  }

  /** The customer's cart, made on first use; an expired reservation is released on read. */
  private async cart(actor: Actor): Promise<CartRow> {
    const at = isoNow(this.deps.clock);
    const cart = await this.deps.carts.findOrCreate({
      id: newId('cart'),
      account_id: actor.accountId,
      customer_id: actor.customerId,
      notes: '',
      checkout_id: null,
      checkout_expires: null,
      ship_country: null,
      ship_state: null,
      ship_postal: null,
      hold_count: 0,
      hold_run_until: null,
      created_at: at,
      updated_at: at,
    });
    if (cart.checkout_id && cart.checkout_expires && cart.checkout_expires <= at) {
      await this.deps.inventory.release(cart.checkout_id);
      await this.deps.carts.touch(cart.id, {
        checkout_id: null,
        checkout_expires: null,
        updated_at: cart.updated_at,
      });
      return { ...cart, checkout_id: null, checkout_expires: null };
    }
    return cart;
  }

  /** A change to the lines releases a prepared checkout: it no longer matches the cart. */
  private async changed(cart: CartRow, at: string): Promise<CartRow> {
    if (cart.checkout_id) await this.deps.inventory.release(cart.checkout_id);
    await this.deps.carts.touch(cart.id, { checkout_id: null, checkout_expires: null, updated_at: at });
    return { ...cart, checkout_id: null, checkout_expires: null, updated_at: at };
  }

  private async variantOf(
    productId: string,
    variantId: string,
  ): Promise<{ product: Product; variant: ProductVariant }> {
    const product = await this.deps.commerce.getProduct(productId);
    if (!product) throw notFound('PRODUCT_NOT_FOUND', 'Product', productId);
    const variant = product.variants.find((v) => v.id === variantId);
    if (!variant)
      throw new AppError(
        'PRODUCT_NOT_FOUND',
        `Variant '${variantId}' of product '${productId}' was not found`,
        {
          productId,
          variantId,
        },
      );
    return { product, variant };
  }

  private async customizations(actor: Actor, input: Customizations): Promise<StoredCustomizations> {
    const out: StoredCustomizations = { giftWrapped: input.giftWrapped ?? false };
    if (input.fragrance !== undefined) out.fragrance = input.fragrance;
    if (input.giftMessage !== undefined && input.giftMessage !== '') out.giftMessage = input.giftMessage;
    if (input.fragranceId !== undefined) {
      const blend = await this.deps.commerce.getBlendForCustomer(
        actor.accountId,
        actor.customerId,
        input.fragranceId,
      );
      if (!blend) throw notFound('BLEND_NOT_FOUND', 'Blend', input.fragranceId);
      out.fragranceId = blend.id;
      out.fragranceName = blend.name;
    }
    return out;
  }

  /** What this cart may hold of a variant: free stock plus what its own checkout already reserved. */
  private async checkStock(variantId: string, wanted: number, cart: CartRow): Promise<void> {
    const level = await this.deps.inventory.level(variantId);
    const own = cart.checkout_id ? await this.reservedBy(cart, variantId) : 0;
    const available = (level?.available ?? 0) + own;
    if (wanted > available) {
      throw new AppError('OUT_OF_STOCK', `Only ${available} of this variant can be ordered`, {
        variantId,
        requested: wanted,
        available,
      });
    }
  }

  private async reservedBy(cart: CartRow, variantId: string): Promise<number> {
    const items = await this.deps.carts.items(cart.id);
    return items.filter((i) => i.variant_id === variantId).reduce((a, i) => a + i.quantity, 0);
  }

  /** The cart's subtotal and its codes' amounts (minor units). */
  private async priced(cart: CartRow) {
    const rows = await this.deps.carts.items(cart.id);
    const variants = await this.deps.commerce.getVariants(rows.map((r) => r.variant_id));
    let subtotal = 0;
    for (const row of rows) {
      const c = JSON.parse(row.customizations) as StoredCustomizations;
      const price = variants.get(row.variant_id)?.variant.price ?? 0;
      subtotal += (price + (c.giftWrapped ? this.deps.settings.giftWrapFee : 0)) * row.quantity;
    }
    return { subtotal, discounts: await this.discountsOf(cart, subtotal) };
  }

  /**
   * The codes on the cart with what each takes off. A code whose conditions stopped holding (the
   * cart shrank below its minimum, it expired) stays on the cart with amount 0 and `applies: false`,
   * and counts again when they hold.
   */
  private async discountsOf(
    cart: CartRow,
    subtotal: number,
  ): Promise<Array<{ row: DiscountRow; amount: number; applies: boolean }>> {
    const rows = await this.deps.discounts.forCart(cart.id);
    const now = isoNow(this.deps.clock);
    let left = subtotal;
    return rows.map((row) => {
      const applies = whyNot(row, now, subtotal) === null;
      const amount = applies ? Math.min(left, amountOf(row, subtotal)) : 0;
      left -= amount;
      return { row, amount, applies };
    });
  }

  private async view(cart: CartRow) {
    const rows = await this.deps.carts.items(cart.id);
    const items = [];
    const priced = [];
    const variants = await this.deps.commerce.getVariants(rows.map((r) => r.variant_id));
    for (const row of rows) {
      const found = variants.get(row.variant_id);
      const customizations = JSON.parse(row.customizations) as StoredCustomizations;
      const price = found?.variant.price ?? 0;
      priced.push({
        unitPrice: price,
        quantity: row.quantity,
        wrapFee: customizations.giftWrapped ? this.deps.settings.giftWrapFee : 0,
      });
      items.push({ row, found, customizations, price });
    }
    const subtotal = priced.reduce((a, l) => a + l.unitPrice * l.quantity + l.wrapFee * l.quantity, 0);
    const discounts = await this.discountsOf(cart, subtotal);
    const taxRate = taxRateFor(cart.ship_country, cart.ship_state, this.deps.settings.taxRate);
    const totals = computeTotals(
      priced,
      discounts.reduce((a, d) => a + d.amount, 0),
      taxRate,
    );
    const ready = cart.checkout_id !== null;
    return {
      id: cart.id,
      customerId: cart.customer_id,
      createdAt: cart.created_at,
      updatedAt: cart.updated_at,
      items: items.map(({ row, found, customizations, price }, i) => ({
        id: row.id,
        productId: row.product_id,
        variantId: row.variant_id,
        name: found?.product.name ?? '',
        variantName: found?.variant.name ?? '',
        sku: found?.variant.sku ?? '',
        price: money(price),
        quantity: row.quantity,
        lineTotal: money(totals.lineAmounts[i] ?? 0),
        image: found ? this.deps.commerce.assetUrl(found.product.image) : '',
        customizations,
      })),
      itemCount: totals.itemCount,
      subtotal: money(totals.subtotal),
      discounts: discounts.map((d) => ({
        code: d.row.code,
        description: d.row.description,
        type: d.row.type,
        value: d.row.type === 'fixed_amount' ? money(d.row.value) : d.row.value,
        amount: money(d.amount),
        applies: d.applies,
      })),
      discountTotal: money(totals.discountTotal),
      estimatedTax: money(totals.estimatedTax),
      estimatedTotal: money(totals.estimatedTotal),
      currency: this.deps.settings.currency,
      notes: cart.notes,
      checkoutId: cart.checkout_id,
      checkoutExpires: cart.checkout_expires,
      inventoryReserved: ready,
      readyForCheckout: ready,
    };
  }
}

/** Thrown to roll a checkout back when stock is short. */
class Shortfall extends Error {
  constructor(
    readonly previous: string | null,
    readonly lines: Shortage[],
  ) {
    super('stock is short');
  }
}

/** Customizations in a fixed key order: equal customizations give equal keys. */
function keyOf(c: StoredCustomizations): string {
  return JSON.stringify([c.fragrance ?? null, c.fragranceId ?? null, c.giftWrapped, c.giftMessage ?? null]);
}
