import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { type DiscountRow, stacks } from './discounts.js';

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

  /** `db` may be a transaction holding the cart. */
  async forCart(cartId: string, db: Db = this.db): Promise<DiscountRow[]> {
    return db
      .selectFrom('cart_discounts')
      .innerJoin('discount_codes', 'discount_codes.id', 'cart_discounts.discount_id')
      .selectAll('discount_codes')
      .where('cart_discounts.cart_id', '=', cartId)
      .orderBy('cart_discounts.applied_at')
      .execute();
  }

  /**
   * Puts a code on a cart if the stacking rule allows it beside the codes there now. Called in a
   * transaction holding the cart (`CartStore.withLockedCart`): the check and the insert see the
   * same codes, so two non-stackable codes applied at once cannot both stick.
   */
  async attachIfStacks(
    trx: Db,
    cartId: string,
    code: DiscountRow,
    at: string,
  ): Promise<'attached' | 'already' | 'not_combinable'> {
    const applied = await this.forCart(cartId, trx);
    if (applied.some((d) => d.id === code.id)) return 'already';
    if (!stacks(applied, code)) return 'not_combinable';
    await trx
      .insertInto('cart_discounts')
      .values({ cart_id: cartId, discount_id: code.id, applied_at: at })
      .execute();
    return 'attached';
  }

  async detach(cartId: string, discountId: string): Promise<void> {
    await this.db
      .deleteFrom('cart_discounts')
      .where('cart_id', '=', cartId)
      .where('discount_id', '=', discountId)
      .execute();
  }

  /**
   * Redeems the codes of an ordered cart, in the order's transaction: one use each, counted by a
   * conditional update (`used_count < usage_limit`), so a limited code is redeemed at most its
   * limit times however many orders race (PostgreSQL re-checks the condition on the locked row).
   * The codes leave the cart. Returns the codes already used up: the caller rolls back.
   */
  async redeemForCart(trx: Db, cartId: string): Promise<DiscountRow[]> {
    const codes = await this.forCart(cartId, trx);
    const exhausted: DiscountRow[] = [];
    // Code rows in id order: two orders redeeming the same codes lock them in the same order.
    for (const code of [...codes].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
      const result = await trx
        .updateTable('discount_codes')
        .set({ used_count: sql`used_count + 1` })
        .where('id', '=', code.id)
        .where((eb) => eb.or([eb('usage_limit', 'is', null), eb('used_count', '<', eb.ref('usage_limit'))]))
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) exhausted.push(code);
    }
    await trx.deleteFrom('cart_discounts').where('cart_id', '=', cartId).execute();
    return exhausted;
  }
}
