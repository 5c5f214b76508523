import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { DiscountRow } from './discounts.js';

export class DiscountStore {
  constructor(private readonly db: Db) {}

  listQuery(accountId: string) {
    return this.db.selectFrom('discount_codes').selectAll().where('account_id', '=', accountId);
  }

  async insert(row: DiscountRow): Promise<void> {
    await this.db.insertInto('discount_codes').values(row).execute();
  }

  async byCode(accountId: string, code: string): Promise<DiscountRow | undefined> {
    return this.db
      .selectFrom('discount_codes')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('code_key', '=', code.toUpperCase())
      .executeTakeFirst();
  }

  async byId(accountId: string, id: string): Promise<DiscountRow | undefined> {
    return this.db
      .selectFrom('discount_codes')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('discount_codes').where('id', '=', id).execute();
  }

  async forCart(cartId: string): Promise<DiscountRow[]> {
    return this.db
      .selectFrom('cart_discounts')
      .innerJoin('discount_codes', 'discount_codes.id', 'cart_discounts.discount_id')
      .selectAll('discount_codes')
      .where('cart_discounts.cart_id', '=', cartId)
      .orderBy('cart_discounts.applied_at')
      .execute();
  }

  async attach(cartId: string, discountId: string, at: string): Promise<void> {
    await this.db
      .insertInto('cart_discounts')
      .values({ cart_id: cartId, discount_id: discountId, applied_at: at })
      .onConflict((oc) => oc.columns(['cart_id', 'discount_id']).doNothing())
      .execute();
  }

  async detach(cartId: string, discountId: string): Promise<void> {
    await this.db
      .deleteFrom('cart_discounts')
      .where('cart_id', '=', cartId)
      .where('discount_id', '=', discountId)
      .execute();
  }

  /**
   * Counts one use of each code, past its limit too: the count says what was redeemed (the limit
   * is checked when a code is applied and at checkout).
   */
  async countUse(ids: string[]): Promise<void> {
    for (const id of ids) {
      await this.db
        .updateTable('discount_codes')
        .set({ used_count: sql`used_count + 1` })
        .where('id', '=', id)
        .execute();
    }
  }
}
