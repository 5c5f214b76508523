import type { Db } from '../../core/db/database.js';
import { isUniqueViolation } from '../../core/db/database.js';
import { lockRow } from '../../core/db/row-lock.js';
import type { CartItemsTable, CartsTable } from './tables.js';

export type CartRow = CartsTable;
type CartItemRow = CartItemsTable;

export class CartStore {
  constructor(private readonly db: Db) {}

  async find(accountId: string, customerId: string): Promise<CartRow | undefined> {
    return this.db
      .selectFrom('carts')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
  }

  /** The customer's cart, made on first use (two first uses at once still make one). */
  async findOrCreate(row: CartRow): Promise<CartRow> {
    const existing = await this.find(row.account_id, row.customer_id);
    if (existing) return existing;
    try {
      await this.db.insertInto('carts').values(row).execute();
      return row;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const raced = await this.find(row.account_id, row.customer_id);
      if (!raced) throw error;
      return raced;
    }
  }

  /** `db` may be a transaction of `withLockedCart`. */
  async items(cartId: string, db: Db = this.db): Promise<CartItemRow[]> {
    return db.selectFrom('cart_items').selectAll().where('cart_id', '=', cartId).orderBy('id').execute();
  }

  async item(cartId: string, itemId: string): Promise<CartItemRow | undefined> {
    return this.db
      .selectFrom('cart_items')
      .selectAll()
      .where('cart_id', '=', cartId)
      .where('id', '=', itemId)
      .executeTakeFirst();
  }

  async line(cartId: string, variantId: string, mergeKey: string): Promise<CartItemRow | undefined> {
    return this.db
      .selectFrom('cart_items')
      .selectAll()
      .where('cart_id', '=', cartId)
      .where('variant_id', '=', variantId)
      .where('merge_key', '=', mergeKey)
      .executeTakeFirst();
  }

  async insertItem(row: CartItemRow, db: Db = this.db): Promise<void> {
    await db.insertInto('cart_items').values(row).execute();
  }

  async updateItem(
    id: string,
    changes: Partial<Pick<CartItemRow, 'quantity' | 'customizations' | 'merge_key'>>,
    db: Db = this.db,
  ) {
    await db.updateTable('cart_items').set(changes).where('id', '=', id).execute();
  }

  async deleteItem(id: string): Promise<void> {
    await this.db.deleteFrom('cart_items').where('id', '=', id).execute();
  }

  /** `db` may be a transaction of `withLockedCart`. */
  async touch(
    cartId: string,
    changes: Partial<
      Pick<
        CartRow,
        | 'notes'
        | 'checkout_id'
        | 'checkout_expires'
        | 'ship_country'
        | 'ship_state'
        | 'ship_postal'
        | 'hold_count'
        | 'hold_run_until'
      >
    > & { updated_at: string },
    db: Db = this.db,
  ): Promise<void> {
    await db.updateTable('carts').set(changes).where('id', '=', cartId).execute();
  }

  /**
   * Runs `fn` in a transaction holding the cart row, read afresh. The first statement writes the
   * row (to itself), which on PostgreSQL locks it until commit, so two changes of one cart's
   * codes or checkout run one after the other; on SQLite Kysely runs one transaction at a time
   * on its single connection. Concurrent requests of one customer cannot both pass a check.
   */
  async withLockedCart<T>(cartId: string, fn: (trx: Db, cart: CartRow) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (trx) => {
      await lockRow(trx, 'carts', cartId);
      const cart = await trx
        .selectFrom('carts')
        .selectAll()
        .where('id', '=', cartId)
        .executeTakeFirstOrThrow();
      return fn(trx, cart);
    });
  }

  async byCheckout(checkoutId: string): Promise<CartRow | undefined> {
    return this.db.selectFrom('carts').selectAll().where('checkout_id', '=', checkoutId).executeTakeFirst();
  }
}
