import { sql, type Transaction } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { Database } from '../../core/db/types.js';

export interface Shortage {
  variantId: string;
  requested: number;
  available: number;
}

interface StockLevel {
  variantId: string;
  onHand: number;
  reserved: number;
  available: number;
}

type Trx = Transaction<Database>;

/**
 * Stock moves as single conditional updates (`… where on_hand - reserved >= n`), so two buyers of the
 * last unit cannot both win on either database; a checkout's lines move together in one transaction.
 */
export class InventoryStore {
  constructor(private readonly db: Db) {}

  async level(variantId: string): Promise<StockLevel | null> {
    const row = await this.db
      .selectFrom('product_variants')
      .select(['id', 'on_hand', 'reserved'])
      .where('id', '=', variantId)
      .executeTakeFirst();
    return row ? levelOf(row) : null;
  }

  async levels(variantIds: string[]): Promise<Map<string, StockLevel>> {
    if (variantIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('product_variants')
      .select(['id', 'on_hand', 'reserved'])
      .where('id', 'in', variantIds)
      .execute();
    return new Map(rows.map((r) => [r.id, levelOf(r)]));
  }

  /** Sets what is on hand; refuses to go below what is reserved. */
  async setOnHand(variantId: string, onHand: number): Promise<StockLevel | 'below-reserved' | null> {
    const result = await this.db
      .updateTable('product_variants')
      .set({ on_hand: onHand })
      .where('id', '=', variantId)
      .where('reserved', '<=', onHand)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1) return this.level(variantId);
    return (await this.level(variantId)) ? 'below-reserved' : null;
  }

  /**
   * Reserves every line for a checkout in the caller's transaction, and returns the shortages:
   * the caller rolls back when there are any (all or nothing). The checkout's previous
   * reservation is released first (a renewal).
   */
  async reserve(
    trx: Db,
    checkoutId: string,
    previousCheckoutId: string | null,
    lines: Map<string, number>,
    expiresAt: string,
  ): Promise<Shortage[]> {
    const shortages: Shortage[] = [];
    if (previousCheckoutId) await this.releaseIn(trx, previousCheckoutId);
    for (const [variantId, quantity] of byVariant(lines)) {
      const result = await trx
        .updateTable('product_variants')
        .set({ reserved: sql`reserved + ${quantity}` })
        .where('id', '=', variantId)
        .where(sql<boolean>`on_hand - reserved >= ${quantity}`)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) {
        const row = await trx
          .selectFrom('product_variants')
          .select(['id', 'on_hand', 'reserved'])
          .where('id', '=', variantId)
          .executeTakeFirst();
        shortages.push({ variantId, requested: quantity, available: row ? levelOf(row).available : 0 });
        continue;
      }
      await trx
        .insertInto('reservations')
        .values({ checkout_id: checkoutId, variant_id: variantId, quantity, expires_at: expiresAt })
        .execute();
    }
    return shortages;
  }

  async release(checkoutId: string): Promise<void> {
    await this.db.transaction().execute((trx) => this.releaseIn(trx, checkoutId));
  }

  /** Deleting the reservation row first makes a release count once, whoever else releases it. */
  private async releaseIn(trx: Db, checkoutId: string): Promise<void> {
    const held = await trx
      .deleteFrom('reservations')
      .where('checkout_id', '=', checkoutId)
      .returning(['variant_id', 'quantity'])
      .execute();
    held.sort((a, b) => (a.variant_id < b.variant_id ? -1 : a.variant_id > b.variant_id ? 1 : 0));
    for (const { variant_id, quantity } of held) {
      await trx
        .updateTable('product_variants')
        .set({ reserved: sql`reserved - ${quantity}` })
        .where('id', '=', variant_id)
        .execute();
    }
  }

  /** Releases every reservation past its time; returns the checkouts released. */
  async releaseExpired(now: string): Promise<string[]> {
    const expired = await this.db
      .selectFrom('reservations')
      .select('checkout_id')
      .distinct()
      .where('expires_at', '<=', now)
      .execute();
    for (const { checkout_id } of expired) await this.release(checkout_id);
    return expired.map((e) => e.checkout_id);
  }

  /**
   * Takes stock for an order: the reservation of `checkoutId` (live or expired) is released and the
   * order's units taken in the same update, so a live hold always covers its own lines. All or nothing.
   */
  async consume(trx: Trx, checkoutId: string | null, lines: Map<string, number>): Promise<Shortage[]> {
    // What the checkout held is released (an expired hold too), then the order takes its units; one
    // update per variant, in variant-id order, so locks are always taken in the same order.
    const released = new Map<string, number>();
    if (checkoutId) {
      const rows = await trx
        .deleteFrom('reservations')
        .where('checkout_id', '=', checkoutId)
        .returning(['variant_id', 'quantity', 'expires_at'])
        .execute();
      for (const row of rows) released.set(row.variant_id, row.quantity);
    }
    const variants = [...new Set([...released.keys(), ...lines.keys()])].sort();
    const shortages: Shortage[] = [];
    for (const variantId of variants) {
      const free = released.get(variantId) ?? 0;
      const take = lines.get(variantId) ?? 0;
      const result = await trx
        .updateTable('product_variants')
        .set({ reserved: sql`reserved - ${free}`, on_hand: sql`on_hand - ${take}` })
        .where('id', '=', variantId)
        .where(sql<boolean>`on_hand - (reserved - ${free}) >= ${take}`)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1 && take > 0) {
        const row = await trx
          .selectFrom('product_variants')
          .select(['id', 'on_hand', 'reserved'])
          .where('id', '=', variantId)
          .executeTakeFirst();
        const available = row ? Math.max(0, row.on_hand - (row.reserved - free)) : 0;
        shortages.push({ variantId, requested: take, available });
      }
    }
    return shortages;
  }
}

/**
 * Lines in variant-id order: every transaction locks variant rows in the same order, so two
 * checkouts holding the same variants in different orders cannot deadlock on PostgreSQL.
 */
function byVariant(lines: Map<string, number>): Array<[string, number]> {
  return [...lines].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function levelOf(row: { id: string; on_hand: number; reserved: number }): StockLevel {
  return {
    variantId: row.id,
    onHand: row.on_hand,
    reserved: row.reserved,
    available: Math.max(0, row.on_hand - row.reserved),
  };
}
