import { type Clock, isoNow } from '../../core/clock.js';
import type { Db } from '../../core/db/database.js';
import { isUniqueViolation } from '../../core/db/database.js';
import { runList } from '../../core/db/list.js';
import { AppError, notFound } from '../../core/errors.js';
import { type ListSpec, parseListQuery } from '../../core/http/list-query.js';
import { newId } from '../../core/ids.js';
import { fromMinor, isMoneyAmount, toMinor } from '../../core/money.js';
import type { CommerceApi } from '../commerce/index.js';
import type { DiscountStore } from './discount-store.js';
import type { InventoryStore } from './inventory-store.js';
import type { OrderBodyT } from './schemas.js';
import type { OrdersTable } from './tables.js';

export const ORDER_LIST_SPEC: ListSpec = {
  columns: { storefrontOrderId: 'storefront_id', createdAt: 'created_at' },
  sortable: ['id', 'createdAt'],
  filters: { storefrontOrderId: 'string' },
  projectable: [
    'id',
    'storefrontOrderId',
    'customer',
    'lineItems',
    'total',
    'currency',
    'checkoutId',
    'createdAt',
  ],
  defaultSort: 'id',
  defaultOrder: 'desc',
  defaultLimit: 20,
  maxLimit: 100,
};

/** Line-item properties that name a custom blend (Shopify-style `properties: [{name, value}]`). */
const BLEND_PROPERTIES = ['fragranceId', 'blendId', '_blend_id'];
const CHECKOUT_ATTRIBUTES = ['checkoutId', 'checkout_id'];
/** Totals are exact integers of minor units (the column is a 64-bit integer). */
const MAX_TOTAL = Number.MAX_SAFE_INTEGER;

/** The customer fields an order keeps; ids are strings or safe integers (the schema says so). */
function customerOf(customer: OrderBodyT['customer']): { id?: string | number; email?: string } {
  return {
    ...(customer.id !== undefined ? { id: customer.id } : {}),
    ...(customer.email !== undefined ? { email: customer.email } : {}),
  };
}

interface StoredLine {
  productId: string;
  variantId: string;
  quantity: number;
  price: number;
  blendId: string | null;
}

const view = (row: OrdersTable) => {
  const lines = JSON.parse(row.line_items) as StoredLine[];
  return {
    id: row.id,
    storefrontOrderId: row.storefront_id,
    customer: JSON.parse(row.customer) as Record<string, unknown>,
    lineItems: lines.map((l) => ({ ...l, price: fromMinor(l.price) })),
    total: fromMinor(row.total),
    currency: row.currency,
    checkoutId: row.checkout_id,
    createdAt: row.created_at,
  };
};

interface OrderServiceDeps {
  db: Db;
  inventory: InventoryStore;
  discounts: DiscountStore;
  commerce: CommerceApi;
  clock: Clock;
  currency: string;
}

/** The storefront's order intake: idempotent on its order id, takes (or consumes reserved) stock. */
export class OrderService {
  constructor(private readonly deps: OrderServiceDeps) {}

  async intake(
    accountId: string,
    body: OrderBodyT,
  ): Promise<{ created: boolean; order: ReturnType<typeof view> }> {
    const storefrontId = String(body.id);
    const existing = await this.find(accountId, storefrontId);
    if (existing) return { created: false, order: view(existing) };

    const lines: StoredLine[] = [];
    const unknown: Array<{ field: string; message: string }> = [];
    const invalid: Array<{ field: string; message: string }> = [];
    for (const [i, item] of body.line_items.entries()) {
      const productId = String(item.product_id);
      const variantId = String(item.variant_id);
      const found = await this.deps.commerce.getVariant(variantId);
      if (!found || found.product.id !== productId) {
        unknown.push({
          field: `line_items[${i}]`,
          message: `variant '${variantId}' of product '${productId}' does not exist`,
        });
        continue;
      }
      if (typeof item.price === 'number' && !isMoneyAmount(item.price)) {
        invalid.push({
          field: `line_items[${i}].price`,
          message: 'must be an amount with at most 2 decimals and 9 digits before them',
        });
      }
      const blend = (item.properties ?? []).find((p) => BLEND_PROPERTIES.includes(p.name));
      if (blend && (typeof blend.value !== 'string' || blend.value === '' || blend.value.length > 100)) {
        invalid.push({ field: `line_items[${i}].properties`, message: `'${blend.name}' must be a blend id` });
        continue;
      }
      lines.push({
        productId,
        variantId,
        quantity: item.quantity,
        price: toMinor(Number(item.price)),
        blendId: blend ? String(blend.value) : null,
      });
    }
    if (invalid.length > 0)
      throw new AppError('VALIDATION_ERROR', 'Invalid order lines', { fields: invalid });
    if (unknown.length > 0)
      throw new AppError('PRODUCT_NOT_FOUND', 'Order lines name unknown products', { fields: unknown });

    const checkoutAttr = (body.note_attributes ?? []).find((a) => CHECKOUT_ATTRIBUTES.includes(a.name));
    const named = body.checkout_id ?? (checkoutAttr ? String(checkoutAttr.value) : null);
    // Only a checkout of this account's carts releases its hold: another account's (or a made-up)
    // id must not take someone else's reservation or empty their cart.
    const ownCart = named ? await this.cartOfCheckout(accountId, named) : undefined;
    const checkoutId = ownCart ? named : null;
    const wanted = new Map<string, number>();
    for (const l of lines) wanted.set(l.variantId, (wanted.get(l.variantId) ?? 0) + l.quantity);
    const total = lines.reduce((a, l) => a + l.price * l.quantity, 0);
    if (!Number.isSafeInteger(total)) {
      throw new AppError('VALIDATION_ERROR', 'The order total is too large', {
        fields: [{ field: 'line_items', message: `the total must stay below ${fromMinor(MAX_TOTAL)}` }],
      });
    }
    const at = isoNow(this.deps.clock);
    const row: OrdersTable = {
      id: newId('ord'),
      account_id: accountId,
      storefront_id: storefrontId,
      // Only the fields the order view promises: other fields are the storefront's, unchecked.
      customer: JSON.stringify(customerOf(body.customer)),
      line_items: JSON.stringify(lines),
      total,
      currency: body.currency ?? this.deps.currency,
      checkout_id: checkoutId,
      created_at: at,
    };
    try {
      await this.deps.db.transaction().execute(async (trx) => {
        await trx.insertInto('orders').values(row).execute();
        // The prepared cart (if it still holds this checkout) becomes this order: it starts over
        // empty and its codes are redeemed. The cart row is written before any stock row, the
        // order a checkout locks them in, so the two cannot deadlock.
        const emptied = ownCart
          ? await trx
              .updateTable('carts')
              .set({
                checkout_id: null,
                checkout_expires: null,
                hold_count: 0,
                hold_run_until: null,
                notes: '',
                updated_at: at,
              })
              .where('id', '=', ownCart.id)
              .where('checkout_id', '=', ownCart.checkoutId)
              .executeTakeFirst()
          : undefined;
        if (ownCart && Number(emptied?.numUpdatedRows ?? 0) === 1) {
          const exhausted = await this.deps.discounts.redeemForCart(trx, ownCart.id);
          if (exhausted.length > 0) {
            const codes = exhausted.map((c) => c.code);
            throw new AppError(
              'INVALID_DISCOUNT_CODE',
              `Discount code '${codes[0]}' was used up by another order; nothing was recorded`,
              { code: codes[0], codes, reason: 'exhausted' },
            );
          }
          await trx.deleteFrom('cart_items').where('cart_id', '=', ownCart.id).execute();
        }
        const shortages = await this.deps.inventory.consume(trx, checkoutId, wanted);
        if (shortages.length > 0) {
          throw new AppError('OUT_OF_STOCK', 'Not enough stock for this order; nothing was taken', {
            lines: shortages,
          });
        }
      });
    } catch (error) {
      if (isUniqueViolation(error)) {
        // The same delivery raced this one: answer with the order it created.
        const raced = await this.find(accountId, storefrontId);
        if (raced) return { created: false, order: view(raced) };
      }
      throw error;
    }
    // Whose order it is: the prepared cart's customer, else the storefront's customer id.
    const customerId =
      ownCart?.customer_id ?? (body.customer.id !== undefined ? String(body.customer.id) : null);
    for (const line of lines) {
      if (!line.blendId) continue;
      const found = await this.deps.commerce.getProduct(line.productId);
      await this.deps.commerce.recordBlendUsage(accountId, {
        blendId: line.blendId,
        productId: line.productId,
        productName: found?.name ?? line.productId,
        orderId: row.id,
        orderDate: at,
        customerId,
      });
    }
    return { created: true, order: view(row) };
  }

  async list(accountId: string, rawQuery: Record<string, unknown>) {
    const query = parseListQuery(rawQuery, ORDER_LIST_SPEC);
    return runList(
      this.deps.db.selectFrom('orders').selectAll().where('account_id', '=', accountId),
      query,
      ORDER_LIST_SPEC,
      view,
    );
  }

  async get(accountId: string, id: string) {
    const row = await this.deps.db
      .selectFrom('orders')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('ORDER_NOT_FOUND', 'Order', id);
    return view(row);
  }

  /** The account's cart prepared as `checkoutId`, if any. */
  private cartOfCheckout(accountId: string, checkoutId: string) {
    return this.deps.db
      .selectFrom('carts')
      .select(['id', 'customer_id', 'checkout_id as checkoutId'])
      .where('checkout_id', '=', checkoutId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  }

  private find(accountId: string, storefrontId: string) {
    return this.deps.db
      .selectFrom('orders')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('storefront_id', '=', storefrontId)
      .executeTakeFirst();
  }
}
